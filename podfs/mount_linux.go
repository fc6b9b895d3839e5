package podfs

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// mountPoints lists the mount points of this mount namespace at or below
// dir, deepest first.
func mountPoints(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), " ") // paths have spaces escaped, not other blanks
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		if rel, err := filepath.Rel(dir, mp); err == nil && filepath.IsLocal(rel) || mp == dir {
			out = append(out, mp)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	// Deepest first, so a mount on top of another comes off first.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

// unescapeMountinfo undoes the kernel's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// isMountRoot reports whether name in directory dirfd is the root of a
// mount, from statx (kernel 5.8 and later); known is false when the kernel
// cannot tell.
func isMountRoot(dirfd int, name string) (root, known bool) {
	var stx unix.Statx_t
	err := unix.Statx(dirfd, name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_TYPE|unix.STATX_INO, &stx)
	if err != nil || stx.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT == 0 {
		return false, false
	}
	return stx.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0, true
}

// isMounted reports whether path is a mount point, by statx or else by
// the mount table.
func isMounted(path string) (bool, error) {
	if root, known := isMountRoot(unix.AT_FDCWD, path); known {
		return root, nil
	}
	mps, err := mountPoints(path)
	if err != nil {
		return false, err
	}
	for _, mp := range mps {
		if mp == path {
			return true, nil
		}
	}
	return false, nil
}

// unmountAll detaches every mount stacked on path.
func unmountAll(path string) error {
	for range 16 {
		mounted, err := isMounted(path)
		if err != nil || !mounted {
			return err
		}
		if err := unix.Unmount(path, unix.MNT_DETACH); err != nil {
			return &os.PathError{Op: "unmount", Path: path, Err: err}
		}
	}
	return &os.PathError{Op: "unmount", Path: path, Err: unix.EBUSY}
}
