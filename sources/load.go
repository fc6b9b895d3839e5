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

// LoadFiles is LoadAll's pods: the pods of paths, with the warnings and
// manifest errors of every document.
func LoadFiles(paths []string, source string, opts manifest.Options) (pods []manifest.Desired, warnings []string, errs []manifest.ManifestError, err error) {
	l, err := LoadAll(paths, source, opts)
	return l.Pods, l.Warnings, l.Errors, err
}

// Loaded is what LoadAll read.
type Loaded struct {
	Pods     []manifest.Desired
	Objects  []manifest.Object
	Warnings []string
	Errors   []manifest.ManifestError
}

// LoadAll decodes the files and directories of paths as the file source
// reads them (each directory's non-hidden regular files), for berth
// validate and berth apply: every pod and object, duplicates refused, with
// the warnings (skipped entries, ignored fields) and manifest errors; err
// is a path that cannot be read.
func LoadAll(paths []string, source string, opts manifest.Options) (Loaded, error) {
	var l Loaded
	opts.FileOrigin = true
	var pathErrs []error
	for _, p := range paths {
		files, skipped, lerr := ListDir(p)
		if errors.Is(lerr, fs.ErrNotExist) {
			pathErrs = append(pathErrs, fmt.Errorf("%s: path does not exist", p))
			continue
		}
		if lerr != nil {
			pathErrs = append(pathErrs, lerr)
			continue
		}
		for _, e := range skipped {
			l.Warnings = append(l.Warnings, e.String())
		}
		if len(files) == 0 {
			l.Warnings = append(l.Warnings, fmt.Sprintf("%s: no file to read (%d entries skipped)", p, len(skipped)))
		}
		for _, f := range files {
			dec, _ := DecodeFile(source, f, opts)
			l.Pods = append(l.Pods, dec.Pods...)
			l.Objects = append(l.Objects, dec.Objects...)
			l.Errors = append(l.Errors, dec.Errors...)
			l.Warnings = append(l.Warnings, dec.Warnings...)
			if dec.Warning != "" {
				l.Warnings = append(l.Warnings, dec.Warning)
			}
			if DeclaresNothing(dec.Decoded) {
				l.Warnings = append(l.Warnings, NothingWarning(f))
			}
		}
	}
	var dups []manifest.ManifestError
	l.Pods, dups = dedupe(l.Pods)
	l.Errors = append(l.Errors, dups...)
	l.Objects, dups = dedupeObjects(l.Objects)
	l.Errors = append(l.Errors, dups...)
	for _, d := range l.Pods {
		if line := manifest.WarningLine(d); line != "" {
			l.Warnings = append(l.Warnings, line)
		}
	}
	return l, errors.Join(pathErrs...)
}
