package nodelogs

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// openBeneath opens rel under dir without leaving it: one openat2 from
// dir's descriptor, RESOLVE_BENEATH (no "..", absolute path or symlink
// escaping dir, at any step) and RESOLVE_NO_MAGICLINKS (no /proc links).
// Where openat2 is missing (Linux < 5.6, or refused by a seccomp profile)
// it falls back to os.Root, which resolves step by step from the same
// descriptor and refuses the same escapes.
func openBeneath(dir, rel string) (*os.File, error) {
	rel, err := cleanRel(rel)
	if err != nil {
		return nil, err
	}
	root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(root)
	fd, err := unix.Openat2(root, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		return openInRoot(dir, rel)
	}
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), rel), nil
}
