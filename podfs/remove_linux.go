package podfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// RemovePod unmounts the pod's subPath binds and the tmpfs of its projected
// volumes (mounted at projected/<name> itself, nothing deeper), then removes
// root_dir/pods/<uid> without ever crossing a mount point: anything still
// mounted below it (a bind of a host directory left behind) is left in
// place and reported, never deleted through. It is the only way a pod's
// files go; a missing pod directory is no error.
func (r Root) RemovePod(uid string) error {
	dir, err := r.PodDir(uid)
	if err != nil {
		return err
	}
	var errs []error
	subpaths, vols := filepath.Join(dir, subpathsDir), filepath.Join(dir, projectedDir)
	var mps []string
	if mayExist(subpaths) || mayExist(vols) {
		all, err := mountPoints(dir)
		if err != nil {
			errs = append(errs, err)
		}
		for _, mp := range all {
			if mp == subpaths || strings.HasPrefix(mp, subpaths+"/") || filepath.Dir(mp) == vols {
				mps = append(mps, mp)
			}
		}
	}
	for _, mp := range mps {
		if err := unmountAll(mp); err != nil {
			errs = append(errs, err)
		}
	}
	if err := removeTree(dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// mayExist reports whether path may exist: nothing is mounted below a
// path lstat does not find.
func mayExist(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// RemoveVolume removes the disk emptyDir root_dir/pods/<uid>/volumes/<volume>
// as RemovePod removes a pod: never across a mount point. Its pod's
// subPath binds into it must be gone (its containers are).
func (r Root) RemoveVolume(uid, volume string) error {
	dir, err := r.VolumeDir(uid, volume)
	if err != nil {
		return err
	}
	return removeTree(dir)
}

// removeTree removes dir and what is below it, file by file relative to
// open directories (a symlink is removed, never followed), and skips with
// an error every mount point and every directory on another device.
func removeTree(dir string) error {
	mounts := map[string]bool{}
	if _, known := isMountRoot(unix.AT_FDCWD, dir); !known {
		// statx cannot tell a mount point here: the mount table does.
		mps, err := mountPoints(dir)
		if err != nil {
			return err
		}
		for _, mp := range mps {
			mounts[mp] = true
		}
	}
	parent := filepath.Dir(dir)
	pfd, err := unix.Open(parent, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: parent, Err: err}
	}
	defer unix.Close(pfd)
	var pst unix.Stat_t
	if err := unix.Fstat(pfd, &pst); err != nil {
		return &os.PathError{Op: "stat", Path: parent, Err: err}
	}
	return removeAt(pfd, filepath.Base(dir), dir, pst.Dev, mounts)
}

// removeAt removes name in directory dirfd (at path, on device dev).
func removeAt(dirfd int, name, path string, dev uint64, mounts map[string]bool) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return &os.PathError{Op: "stat", Path: path, Err: err}
	}
	root, _ := isMountRoot(dirfd, name)
	if root || mounts[path] || st.Dev != dev {
		return fmt.Errorf("%w: %s is a mount point or on another device; not removed", ErrUnsafe, path)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		if err := unix.Unlinkat(dirfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return &os.PathError{Op: "unlink", Path: path, Err: err}
		}
		return nil
	}
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	d := os.NewFile(uintptr(fd), path)
	defer d.Close()
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil || now.Dev != st.Dev || now.Ino != st.Ino {
		return fmt.Errorf("%w: %s changed while it was being removed", ErrUnsafe, path)
	}
	var errs []error
	for {
		ents, err := d.ReadDir(256)
		for _, e := range ents {
			errs = append(errs, removeAt(fd, e.Name(), filepath.Join(path, e.Name()), st.Dev, mounts))
		}
		if err != nil || len(ents) == 0 {
			break
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		return &os.PathError{Op: "rmdir", Path: path, Err: err}
	}
	return nil
}
