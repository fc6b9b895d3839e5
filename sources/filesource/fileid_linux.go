package filesource

import (
	"os"
	"syscall"
)

// statID returns the identity of file (following symlinks), or false.
func statID(file string) (fileID, bool) {
	fi, err := os.Stat(file)
	if err != nil {
		return fileID{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{size: fi.Size(), mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: st.Ino}, true
}
