package testutil

import "runtime"

// Allocated runs f and returns the bytes the process allocated meanwhile
// (every goroutine's, a test server's handlers included), after a GC.
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
