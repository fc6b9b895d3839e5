package main

// Scenario 4, in-memory: the existing Go benchmarks of the controller (10 000
// pods on the in-memory runtime) and of the store, run as they are.

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

type inmemResult struct {
	cmd string
	out string
	err string
	dur time.Duration
}

var inmemCommands = [][]string{
	{"go", "test", "-run", "^$", "-bench", "ControllerScale", "-benchtime", "1x", "./controller/"},
	{"go", "test", "-run", "^$", "-bench", ".", "-benchtime", "20000x", "./store/"},
}

func (b *bench) runInMemory(ctx context.Context, res *results) error {
	var failed []string
	for _, args := range inmemCommands {
		r := inmemResult{cmd: shellQuote(args)}
		logf("running %s", r.cmd)
		cctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
		cmd := exec.CommandContext(cctx, args[0], args[1:]...)
		cmd.Dir = b.root
		t := time.Now()
		out, err := cmd.CombinedOutput()
		cancel()
		r.dur, r.out = time.Since(t), string(out)
		if err != nil {
			r.err = err.Error()
			failed = append(failed, r.cmd)
		}
		res.inmem = append(res.inmem, r)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("failed: %s", strings.Join(failed, "; "))
	}
	return nil
}

// shellQuote renders args as a shell command line.
func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " ^$*'\"\\") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}
