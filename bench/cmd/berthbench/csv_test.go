package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/bench/internal/benchkit"
)

// The raw rows land in one CSV per scenario, named by commit and machine,
// and the report links them instead of carrying them.
func TestRawRowsGoToCSV(t *testing.T) {
	r := &results{
		machine: machineInfo{Machine: benchkit.Machine{Commit: "0123456789ab", CPU: "AMD EPYC 7B13", NProc: 2}},
		start: &startResults{runs: []startRun{
			{system: sysBerth, n: 1, run: 1, total: 318 * time.Millisecond, firstCreate: 16800 * time.Microsecond},
			{system: sysMinimal, n: 1, run: 1, err: "engine gone\nmore"},
		}},
	}
	root := t.TempDir()
	files, err := r.writeRaw(root, options{results: "bench/results"})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join("bench/results", "start-0123456-2cpu-amd-epyc-7b13.csv")
	if files["start"] != want {
		t.Fatalf("files %v, want start at %s", files, want)
	}
	f, err := os.Open(filepath.Join(root, want))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[1][3] != "318.0" || rows[1][4] != "16.8" || rows[2][3] != "" || rows[2][7] != "engine gone" {
		t.Fatalf("rows %q", rows)
	}
	r.rawFiles = files
	var s strings.Builder
	r.rawLink(&s, "start", 2)
	if !strings.Contains(s.String(), "("+want+")") {
		t.Fatalf("report does not link the rows: %q", s.String())
	}
}

func TestBenchLinesDropLogs(t *testing.T) {
	out := "2026/12/03 INFO starting container\ngoos: linux\nBenchmarkX-2 \t 1\t 5 ns/op\nPASS\nok  \tpkg\t1s\n"
	if got := benchLines(out); got != "goos: linux\nBenchmarkX-2 \t 1\t 5 ns/op\nPASS\nok  \tpkg\t1s" {
		t.Fatalf("benchLines = %q", got)
	}
}
