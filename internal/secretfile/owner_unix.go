//go:build unix

package secretfile

import (
	"io/fs"
	"syscall"
)

// fileOwner is the uid that owns fi (from Lstat or Stat).
func fileOwner(fi fs.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
