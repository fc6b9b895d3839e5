//go:build !unix

package server

// openFileLimit is unknown outside unix.
func openFileLimit() uint64 { return 0 }
