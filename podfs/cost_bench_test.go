package podfs

import (
	"fmt"
	"testing"
)

// BenchmarkTerminationLogStart is the podfs work of one container start:
// the termination log made, then its path asked for again by translation.
func BenchmarkTerminationLogStart(b *testing.B) {
	r := New(b.TempDir())
	if err := r.Prepare(); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		uid := fmt.Sprintf("%08d-0000-0000-0000-000000000000", i)
		if _, err := r.MakeTerminationLog(uid, "app", 0); err != nil {
			b.Fatal(err)
		}
		if _, err := r.TerminationLog(uid, "app", 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTerminationLogPath is the confinement of a termination log's
// path whose directories do not exist yet.
func BenchmarkTerminationLogPath(b *testing.B) {
	r := New(b.TempDir())
	if err := r.Prepare(); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if _, err := r.TerminationLog("00000000-0000-0000-0000-000000000000", "app", 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRemovePod is the removal of a pod's directory holding one
// termination log, as each deleted pod's: its cost grows with the host's
// mount table only when the pod has subPath binds or projected volumes.
func BenchmarkRemovePod(b *testing.B) {
	r := New(b.TempDir())
	if err := r.Prepare(); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		uid := fmt.Sprintf("%08d-0000-0000-0000-000000000000", i)
		b.StopTimer()
		if _, err := r.MakeTerminationLog(uid, "app", 0); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := r.RemovePod(uid); err != nil {
			b.Fatal(err)
		}
	}
}
