package e2e

import (
	"bufio"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
)

// lineStream is a command left running (berth get -w, logs -f; kubectl get
// -w, logs -f, port-forward), its stdout read line by line; every line read
// is kept in seen.
type lineStream struct {
	name string // in messages: "berth", "kubectl"
	// cleanExit: interrupt wants exit 0 (berth's commands end cleanly on
	// Ctrl-C; kubectl's exit status then is its own business).
	cleanExit bool
	cmd       *exec.Cmd
	lines     chan string
	stderr    *testutil.SyncBuffer
	done      chan error
	seen      []string
}

// startLineStream starts cmd, whose Stdout and Stderr must be unset; the
// process is killed at the test's end.
func startLineStream(t *testing.T, name string, cmd *exec.Cmd) *lineStream {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &lineStream{name: name, cmd: cmd, lines: make(chan string, 1000), stderr: &testutil.SyncBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s %v: %v", name, cmd.Args, err)
	}
	scanned := make(chan struct{})
	go func() { // ends at the process's exit (stdout closed)
		defer close(scanned)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	go func() {
		<-scanned
		s.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-scanned
	})
	return s
}

// waitLine returns the first line from now for which match is true.
func (s *lineStream) waitLine(t *testing.T, what string, match func(string) bool) string {
	t.Helper()
	deadline := time.After(waitLong)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				t.Fatalf("%s exited before printing %s; stdout %q, stderr %q", s.name, what, s.seen, s.stderr.String())
			}
			s.seen = append(s.seen, l)
			if match(l) {
				return l
			}
		case <-deadline:
			t.Fatalf("%s printed no line with %s within %s; stdout %q, stderr %q", s.name, what, waitLong, s.seen, s.stderr.String())
		}
	}
}

// collect reads lines into s.seen for d (an observation window, not a
// wait for something).
func (s *lineStream) collect(d time.Duration) {
	end := time.After(d)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				return
			}
			s.seen = append(s.seen, l)
		case <-end:
			return
		}
	}
}

// interrupt sends SIGINT, as Ctrl-C does, and waits for the exit.
func (s *lineStream) interrupt(t *testing.T) {
	t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-s.done:
		if err != nil && s.cleanExit {
			t.Errorf("%s after SIGINT: %v, want exit 0 (stderr %q)", s.name, err, s.stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Errorf("%s still running 10s after SIGINT", s.name)
	}
}
