package podfs

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// MaxVolumeFile bounds a file ReadVolumeFile returns.
const MaxVolumeFile = 1 << 20

// ReadVolumeFile reads the regular file at rel inside the pod's disk
// emptyDir volume (an env file a container wrote), confined to the volume:
// rel is relative without "..", and symlinks a container planted resolve
// inside the volume or fail. A missing file's error wraps fs.ErrNotExist.
// It never blocks on a FIFO and reads at most MaxVolumeFile bytes.
func (r Root) ReadVolumeFile(uid, volume, rel string) ([]byte, error) {
	dir, err := r.VolumeDir(uid, volume)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", rel)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxVolumeFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxVolumeFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", rel, MaxVolumeFile)
	}
	return data, nil
}
