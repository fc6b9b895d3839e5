package podfs

import (
	"os"
	"path/filepath"
	"syscall"
)

// MakeVolumeDir creates the pod's disk emptyDir (VolumeDir) when absent and
// calls own, when set, on it opened without following a symlink (so a
// directory swapped for a symlink is refused, not chowned through); it is
// idempotent and returns the directory.
func (r Root) MakeVolumeDir(uid, volume string, own func(dir *os.File) error) (string, error) {
	dir, err := r.VolumeDir(uid, volume)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", err
	}
	if own == nil {
		return dir, nil
	}
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return dir, own(f)
}

// MakeTerminationLog creates the instance's TerminationLog as an empty,
// world-writable file (emptying one already there) and returns its path.
func (r Root) MakeTerminationLog(uid, container string, attempt int) (string, error) {
	f, err := r.TerminationLog(uid, container, attempt)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(f, nil, 0o666); err != nil {
		return "", err
	}
	return f, os.Chmod(f, 0o666)
}
