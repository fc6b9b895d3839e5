//go:build unix

package server

import "syscall"

// openFileLimit is the soft RLIMIT_NOFILE of the process, which the Go
// runtime raises to the hard limit at start; 0 when unknown.
func openFileLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return uint64(r.Cur)
}
