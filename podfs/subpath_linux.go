package podfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// BindSubPath opens s.Path inside s.VolumePath one element at a time from
// the volume's directory, never following a symlink (making missing
// directories the same way), checks that the file it opened is still in
// the volume, and bind-mounts that open file at SubpathDir: the path to
// hand the engine. A container can swap names in the volume, but not what
// the bind holds, so the engine's own resolution at container start cannot
// be redirected (CVE-2017-1002101). A bind already there of the same file
// is reused; one of another file is replaced. A subPath of "." is the
// volume's directory itself, returned unbound.
func (r Root) BindSubPath(s SubPath) (string, error) {
	target, err := r.SubpathDir(s.UID, s.Volume, s.Container, s.Index)
	if err != nil {
		return "", err
	}
	clean, err := LocalSubPath(s.Path)
	if err != nil {
		return "", err
	}
	if clean == "." {
		return s.VolumePath, nil
	}
	fd, err := openInVolume(s, clean)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	var src unix.Stat_t
	if err := unix.Fstat(fd, &src); err != nil {
		return "", fmt.Errorf("subPath %q: %w", s.Path, err)
	}
	reused, err := prepareTarget(target, &src)
	if err != nil || reused {
		return target, err
	}
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fd), target, "", unix.MS_BIND, ""); err != nil {
		return "", fmt.Errorf("subPath %q: bind at %s: %w", s.Path, target, err)
	}
	return target, nil
}

// openInVolume returns an O_PATH descriptor of sub (clean, relative) in
// s.VolumePath, opened as BindSubPath says.
func openInVolume(s SubPath, sub string) (int, error) {
	base, err := filepath.EvalSymlinks(s.VolumePath)
	if err != nil {
		return -1, fmt.Errorf("subPath %q: volume: %w", s.Path, err)
	}
	cur, err := unix.Open(base, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("subPath %q: volume %s: %w", s.Path, base, err)
	}
	parts := strings.Split(sub, "/")
	for i, part := range parts {
		rel := strings.Join(parts[:i+1], "/")
		next, err := openOrMake(cur, part, s)
		unix.Close(cur)
		if err != nil {
			return -1, fmt.Errorf("subPath %q: %s: %w", s.Path, rel, err)
		}
		cur = next
		var st unix.Stat_t
		if err := unix.Fstat(cur, &st); err != nil {
			unix.Close(cur)
			return -1, fmt.Errorf("subPath %q: %s: %w", s.Path, rel, err)
		}
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			unix.Close(cur)
			return -1, fmt.Errorf("subPath %q: %s is a symlink, which could leave the volume", s.Path, rel)
		case st.Mode&unix.S_IFMT != unix.S_IFDIR && i < len(parts)-1:
			unix.Close(cur)
			return -1, fmt.Errorf("subPath %q: %s is not a directory", s.Path, rel)
		}
	}
	// What was opened is where the kernel says it is now: still inside.
	at, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(cur))
	if rel, rerr := filepath.Rel(base, at); err != nil || rerr != nil || !filepath.IsLocal(rel) {
		unix.Close(cur)
		return -1, fmt.Errorf("%w: subPath %q resolves to %q, outside the volume %s", ErrUnsafe, s.Path, at, base)
	}
	return cur, nil
}

// openOrMake opens name in dirfd without following a symlink, making it a
// directory (mode, then s.Own on it) when it is missing.
func openOrMake(dirfd int, name string, s SubPath) (int, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if !errors.Is(err, unix.ENOENT) || s.NoCreate {
		return fd, err
	}
	err = unix.Mkdirat(dirfd, name, uint32(s.Mode.Perm()))
	if errors.Is(err, unix.EEXIST) {
		// Made meanwhile by someone else: open what is there, as above.
		return unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return -1, err
	}
	dfd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err // swapped for a symlink or a file since the mkdir
	}
	d := os.NewFile(uintptr(dfd), name)
	defer d.Close()
	if s.Own != nil {
		if err := s.Own(d); err != nil {
			return -1, err
		}
	}
	return unix.Openat(dfd, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// prepareTarget makes target a bind target of src's type; reused is set
// when a bind of src is there already. Another bind is taken off first.
func prepareTarget(target string, src *unix.Stat_t) (reused bool, err error) {
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return false, err
	}
	mounted, err := isMounted(target)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	if mounted {
		var st unix.Stat_t
		if err := unix.Stat(target, &st); err == nil && st.Dev == src.Dev && st.Ino == src.Ino {
			return true, nil
		}
		if err := unmountAll(target); err != nil {
			return false, err
		}
	}
	wantDir := src.Mode&unix.S_IFMT == unix.S_IFDIR
	if fi, err := os.Lstat(target); err == nil {
		if fi.IsDir() == wantDir && (wantDir || fi.Mode().IsRegular()) {
			return false, nil
		}
		if err := os.Remove(target); err != nil {
			return false, err
		}
	}
	if wantDir {
		return false, os.Mkdir(target, 0o750)
	}
	// A file is a target for any non-directory: a bind replaces its type.
	f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		return false, err
	}
	return false, f.Close()
}
