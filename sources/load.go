package sources

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/berth-dev/berth/manifest"
)

// ValidateFiles decodes and validates the manifests at paths, as
// `berth validate` does. A path may be a file, read whatever its name, or a
// directory, whose entries are filtered as the file source filters them. It
// returns the number of valid pods; the warnings: each directory entry
// skipped with the reason, a directory with no file to read, the
// WarningLine of each pod that has one and each file's own warning (a
// Secret others may read); and every manifest error, including pod keys
// declared by more than one file. err joins the paths that do not exist or
// cannot be listed.
func ValidateFiles(paths []string, opts manifest.Options) (npods int, warnings []string, errs []manifest.ManifestError, err error) {
	pods, warnings, errs, err := LoadFiles(paths, "validate", opts)
	return len(pods), warnings, errs, err
}

// LoadFiles decodes and validates the manifests at paths (files or
// directories) as the file source would, as source source: the accepted
// pods (deduplicated), warning lines (as ValidateFiles's), rejections, and
// the paths that could not be read.
func LoadFiles(paths []string, source string, opts manifest.Options) (pods []manifest.Desired, warnings []string, errs []manifest.ManifestError, err error) {
	opts.FileOrigin = true
	var pathErrs []error
	for _, p := range paths {
		files, skipped, lerr := listDir(p)
		if errors.Is(lerr, fs.ErrNotExist) {
			pathErrs = append(pathErrs, fmt.Errorf("%s: path does not exist", p))
			continue
		}
		if lerr != nil {
			pathErrs = append(pathErrs, lerr)
			continue
		}
		for _, e := range skipped {
			warnings = append(warnings, e.String())
		}
		if len(files) == 0 {
			warnings = append(warnings, fmt.Sprintf("%s: no file to read (%d entries skipped)", p, len(skipped)))
		}
		for _, f := range files {
			dec, _ := decodeFile(source, f, opts)
			pods = append(pods, dec.Pods...)
			errs = append(errs, dec.Errors...)
			if dec.warning != "" {
				warnings = append(warnings, dec.warning)
			}
		}
	}
	pods, dups := dedupe(pods)
	errs = append(errs, dups...)
	for _, d := range pods {
		if line := manifest.WarningLine(d); line != "" {
			warnings = append(warnings, line)
		}
	}
	return pods, warnings, errs, errors.Join(pathErrs...)
}
