package podfs

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Host is the node's filesystem outside root_dir as pod translation uses
// it: the files berth's configuration names (resolv.conf) and the hostPath
// volumes of privileged sources, which are host paths by design (admission
// refuses them from untrusted sources; nothing here confines them).
type Host struct{}

// ReadFile reads the file at path.
func (Host) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

// Stat describes the file at path, following symlinks.
func (Host) Stat(path string) (fs.FileInfo, error) { return os.Stat(path) }

// MkdirAll makes the directory path and its parents (0755).
func (Host) MkdirAll(path string) error { return os.MkdirAll(path, 0o755) }

// CreateFile makes an empty file at path (0644), and its parent
// directories; an existing file is left as it is.
func (Host) CreateFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// SeccompProfile reads the Localhost seccomp profile name from
// root_dir/seccomp (the kubelet's seccomp root). os.Root confines the read
// to that directory, symlinks included: a name with "..", an absolute name
// or a link out of it is refused.
func (r Root) SeccompProfile(name string) ([]byte, error) {
	root, err := os.OpenRoot(filepath.Join(r.dir, "seccomp"))
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.ReadFile(name)
}
