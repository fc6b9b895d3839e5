package main

// Scenario linear: the etcd one-node linearity benchmark of test/scale
// (1,000 pods put one by one on one node through etcd; CPU per put over the
// last 100 against the first 100, goal ≤ 1.2), run as it is and reported
// with its own output.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// linearBenchmark is the Go benchmark of test/scale this scenario runs.
const linearBenchmark = "OneNodeLinear"

var linearCommand = []string{"go", "test", "-run", "^$", "-bench", "^Benchmark" + linearBenchmark + "$", "-benchtime", "1x", "-timeout", "30m", "./test/scale/"}

// linearGoal is the largest ratio of the CPU per put over the last window
// to that over the first.
const linearGoal = 1.2

type linearResult struct {
	inmemResult
	ratio float64 // last/first as the benchmark reports it; 0 if absent
	// sizing is the BERTH_LINEAR_* settings the run inherited ("": the
	// benchmark's defaults, 1,000 pods and windows of 100).
	sizing string
}

func (b *bench) runLinear(ctx context.Context, res *results) error {
	r := &linearResult{inmemResult: inmemResult{cmd: "CGO_ENABLED=0 " + shellQuote(linearCommand)}}
	res.linear = r
	for _, k := range []string{"BERTH_LINEAR_PODS", "BERTH_LINEAR_WINDOW"} {
		if v := os.Getenv(k); v != "" {
			r.sizing = strings.TrimSpace(r.sizing + " " + k + "=" + v)
		}
	}
	logf("running %s", r.cmd)
	cctx, cancel := context.WithTimeout(ctx, 35*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, linearCommand[0], linearCommand[1:]...)
	cmd.Dir = b.root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	t := time.Now()
	out, err := cmd.CombinedOutput()
	r.dur, r.out = time.Since(t), string(out)
	if err != nil {
		r.err = err.Error()
		return fmt.Errorf("%s: %v", r.cmd, err)
	}
	var ok bool
	if r.ratio, ok = benchMetric(r.out, "Benchmark"+linearBenchmark, "last/first"); !ok {
		r.err = "no Benchmark" + linearBenchmark + " result with a last/first metric in the output"
		return fmt.Errorf("%s: %s", r.cmd, r.err)
	}
	return nil
}

// benchMetric finds the value of unit in the result line of benchmark
// name ("BenchmarkX-2  1  123 ns/op  1.05 last/first").
func benchMetric(out, name, unit string) (float64, bool) {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || (f[0] != name && !strings.HasPrefix(f[0], name+"-")) {
			continue
		}
		for i := 1; i < len(f); i++ {
			if f[i] == unit {
				v, err := strconv.ParseFloat(f[i-1], 64)
				return v, err == nil
			}
		}
	}
	return 0, false
}
