package podfs

import (
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

// Names inside a projected volume's directory, as the kubelet's atomic
// writer lays it out: the payload lives in a timestamped directory
// "..<time>", "..data" is a symlink to the current one, and each top-level
// name of the payload is a symlink through "..data". A reader therefore
// sees either the whole old set or the whole new one.
const (
	dataLink    = "..data"
	dataLinkTmp = "..data_tmp"
	tsLayout    = "2006_01_02_15_04_05"
)

// File is one file of a projected volume.
type File struct {
	Data []byte
	// Mode is the file's permission bits (0 means 0644).
	Mode os.FileMode
}

// Projection is what one configMap, secret, downwardAPI or projected volume
// of a pod must hold.
type Projection struct {
	UID, Volume string
	// Files are keyed by their path relative to the volume: clean, local,
	// no element starting with "..".
	Files map[string]File
	// Tmpfs puts the volume on a tmpfs of at most SizeBytes (0: the
	// kernel's default), so that its files never reach a disk (Secrets).
	Tmpfs     bool
	SizeBytes int64
	// GID, when set, owns the files and directories (fsGroup), which get
	// group read (and search) as the kubelet gives them.
	GID *int64
	// Now names the new timestamped directory.
	Now time.Time
}

// checkProjectionPaths refuses a payload path that could leave the volume
// or shadow the writer's own names.
func checkProjectionPaths(files map[string]File) error {
	for p := range files {
		clean := path.Clean(p)
		switch {
		case p == "" || clean != p || path.IsAbs(p) || strings.ContainsRune(p, 0):
			return fmt.Errorf("%w: projected file %q is not a clean relative path", ErrUnsafe, p)
		}
		for _, el := range strings.Split(p, "/") {
			if strings.HasPrefix(el, "..") || el == "." {
				return fmt.Errorf("%w: projected file %q has an element starting with '..'", ErrUnsafe, p)
			}
		}
	}
	// A file may not be a directory of another ("a" and "a/b").
	names := make([]string, 0, len(files))
	for p := range files {
		names = append(names, p)
	}
	sort.Strings(names)
	for i := 1; i < len(names); i++ {
		if strings.HasPrefix(names[i], names[i-1]+"/") {
			return fmt.Errorf("projected file %q is also a directory of %q", names[i-1], names[i])
		}
	}
	return nil
}

// topLevel is the set of first path elements of files: the user-visible
// names of the volume.
func topLevel(files map[string]File) map[string]bool {
	out := map[string]bool{}
	for p := range files {
		first, _, _ := strings.Cut(p, "/")
		out[first] = true
	}
	return out
}
