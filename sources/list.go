package sources

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// skipReason says why a directory entry name is not read as a manifest, or
// "" when it is read. The file source reads every other regular file, as
// the kubelet does (the 2014 manifests are named *.manifest): it skips
// names starting with "." (hidden, as the kubelet skips them; also atomic
// writes' temporaries and "..data" swaps) and editor swap and backup files
// (*~, *.swp, *.swo, *.swx, *.bak, *.tmp, #*#).
func skipReason(name string) string {
	if strings.HasPrefix(name, ".") {
		return reasonHidden
	}
	if strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#") {
		return "an editor backup file"
	}
	for _, suffix := range []string{"~", ".swp", ".swo", ".swx", ".bak", ".tmp"} {
		if strings.HasSuffix(name, suffix) {
			return "an editor swap or backup file"
		}
	}
	return ""
}

const reasonHidden = "hidden"

// IgnoredName reports whether a directory entry is not a manifest by its
// name alone.
func IgnoredName(name string) bool { return skipReason(name) != "" }

// SkippedEntry is a directory entry the file source does not read, and
// why (skipReason).
type SkippedEntry struct {
	Path, Reason string
}

func (e SkippedEntry) String() string { return e.Path + ": skipped: " + e.Reason }

// Hidden reports whether the entry was skipped for a name starting with
// ".", which the kubelet skips silently.
func (e SkippedEntry) Hidden() bool { return e.Reason == reasonHidden }

// ListDir returns the manifest files at path, following symlinks: path
// itself when it is a file (whatever its name), else the directory's
// entries in name order, except the entries skipped (by name, or as
// subdirectories, dangling symlinks, symlinks that cannot be followed (a
// loop, a directory that may not be searched) and other non-regular
// files), which it
// returns with the reason. Entries that vanish while listing are left out.
func ListDir(path string) (files []string, skipped []SkippedEntry, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() {
			return nil, nil, fmt.Errorf("%s: not a regular file or directory", path)
		}
		return []string{path}, nil, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		full := filepath.Join(path, e.Name())
		if why := skipReason(e.Name()); why != "" {
			skipped = append(skipped, SkippedEntry{full, why})
			continue
		}
		mode := e.Type()
		if mode&fs.ModeSymlink != 0 {
			fi, err := os.Stat(full)
			switch {
			case err == nil:
				mode = fi.Mode()
			case !errors.Is(err, fs.ErrNotExist):
				skipped = append(skipped, SkippedEntry{full, "a symlink that cannot be followed: " + unwrapPathError(err).Error()})
				continue
			case linkExists(full):
				skipped = append(skipped, SkippedEntry{full, "a dangling symlink"})
				continue
			default:
				continue // gone while listing
			}
		}
		switch {
		case mode.IsRegular():
			files = append(files, full)
		case mode.IsDir():
			skipped = append(skipped, SkippedEntry{full, "a directory (the source does not recurse)"})
		default:
			skipped = append(skipped, SkippedEntry{full, "not a regular file"})
		}
	}
	return files, skipped, nil
}

// listManifests is ListDir without the skipped entries.
func listManifests(path string) ([]string, error) {
	files, _, err := ListDir(path)
	return files, err
}

func linkExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
