package benchkit

import (
	"os"
	"path/filepath"
	"testing"
)

// Result files are named by scenario, commit and machine; a dirty tree is
// marked.
func TestResultFile(t *testing.T) {
	m := Machine{Commit: "0123456789ab", CPU: "AMD EPYC 7B13", NProc: 2}
	if got, want := m.ResultFile("bench/results", "start"), filepath.Join("bench/results", "start-0123456-2cpu-amd-epyc-7b13.csv"); got != want {
		t.Errorf("ResultFile = %s, want %s", got, want)
	}
	m.Commit = "abc1234 + uncommitted changes"
	if got := m.ResultFile("r", "soak"); got != filepath.Join("r", "soak-abc1234-dirty-2cpu-amd-epyc-7b13.csv") {
		t.Errorf("dirty ResultFile = %s", got)
	}
}

// The test's own process, as the benchmarks read berth's.
func TestOwnProc(t *testing.T) {
	if _, err := CPUTicks(os.Getpid()); err != nil {
		t.Error(err)
	}
	if _, err := CPUTicks(-1); err == nil {
		t.Error("CPUTicks of no process: no error")
	}
	if ClkTck() <= 0 {
		t.Error("ClkTck not positive")
	}
	if ProcField("/proc/self/status", "Pid") == "" || ProcField("/proc/self/status", "NoSuchKey") != "" {
		t.Error("ProcField")
	}
	if Loadavg() == "?" {
		t.Error("Loadavg unreadable")
	}
}
