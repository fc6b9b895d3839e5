//go:build !linux

package podfs

import (
	"errors"
	"os"
	"path/filepath"
)

// RemovePod removes root_dir/pods/<uid> through an os.Root (berth makes no
// mounts off Linux, so there is none to cross).
func (r Root) RemovePod(uid string) error {
	dir, err := r.PodDir(uid)
	if err != nil {
		return err
	}
	return removeUnder(dir)
}

// RemoveVolume removes a pod's disk emptyDir through an os.Root.
func (r Root) RemoveVolume(uid, volume string) error {
	dir, err := r.VolumeDir(uid, volume)
	if err != nil {
		return err
	}
	return removeUnder(dir)
}

// removeUnder removes dir, confined to its parent; a missing one is no error.
func removeUnder(dir string) error {
	root, err := os.OpenRoot(filepath.Dir(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer root.Close()
	return root.RemoveAll(filepath.Base(dir))
}

// BindSubPath needs Linux bind mounts.
func (r Root) BindSubPath(s SubPath) (string, error) {
	return "", errors.New("subPath: bind mounts need Linux")
}

// WriteProjection needs Linux (tmpfs mounts, the atomic layout's renames).
func (r Root) WriteProjection(p Projection) (bool, error) {
	return false, errors.New("projected volumes need Linux")
}

// ProjectionDataDir needs Linux.
func (r Root) ProjectionDataDir(uid, volume string) (string, error) {
	return "", errors.New("projected volumes need Linux")
}
