package testutil

import (
	"context"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// StartRun runs run (a loop such as a source's Run) until the test ends,
// and returns what it sends.
func StartRun[T any](t *testing.T, run func(context.Context, chan<- T) error) <-chan T {
	t.Helper()
	out, stop := RunStoppable(t, run)
	t.Cleanup(stop)
	return out
}

// RunStoppable runs run (a loop such as a source's Run) in a goroutine
// until stop, which cancels its context and waits for it to return (as a
// restart of berth ends its sources); stop may be called more than once.
func RunStoppable[T any](t *testing.T, run func(context.Context, chan<- T) error) (<-chan T, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan T)
	done := make(chan error, 1)
	go func() { done <- run(ctx, out) }()
	var once sync.Once
	return out, func() {
		once.Do(func() {
			cancel()
			RunReturned(t, done, "Run did not return after cancel")
		})
	}
}

// RunReturned waits up to 5 s for a Run's result on done, failing the test
// with late when it does not come, or with the error it returns.
func RunReturned(t *testing.T, done <-chan error, late string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error(late)
	}
}

// WaitBlockedIn waits up to 5 s until a goroutine is blocked in a select
// in fn, a function named with its package path's tail (as
// "berth/sources.(*HTTPSource).fetch"): the state a "stops while sending"
// test starts from. It reads the goroutines' stacks, polling.
func WaitBlockedIn(t *testing.T, fn string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	buf := make([]byte, 1<<20)
	for {
		n := goruntime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			header, _, _ := strings.Cut(g, "\n")
			if strings.Contains(g, fn+"(") && strings.Contains(header, "[select") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no goroutine blocked in %s within 5 s", fn)
		}
		time.Sleep(time.Millisecond)
	}
}

// WriteFile writes data to name in dir (mode 0644) and returns its path.
func WriteFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
