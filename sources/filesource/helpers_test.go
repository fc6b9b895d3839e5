package filesource

import (
	"context"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/sources"
)

// podYAML is a valid pod with a host port, as a user writes one.
const podYAML = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: web
    image: berth/testapp:1
    args: [serve]
    ports:
    - containerPort: 8080
      hostPort: 18080
`

// startSource runs s until the test ends and returns its updates.
func startSource(t *testing.T, s *Source) <-chan sources.Update {
	t.Helper()
	out, stop := runStoppable(t, s)
	t.Cleanup(stop)
	return out
}

// runStoppable runs s until stop, which waits for Run to return (as a
// restart of berth ends its sources); stop may be called more than once.
func runStoppable(t *testing.T, s *Source) (<-chan sources.Update, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan sources.Update)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, out) }()
	var once sync.Once
	return out, func() {
		once.Do(func() {
			cancel()
			runReturned(t, done, "Run did not return after cancel")
		})
	}
}

// runReturned waits up to 5 s for a Run's result on done, failing the test
// with late when it does not come, or with the error it returns.
func runReturned(t *testing.T, done <-chan error, late string) {
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

// waitBlockedIn waits until a goroutine is blocked in a select in fn (as
// "(*Source).scanAndSend"), offering an update nobody takes: the state
// "stops while sending" starts from. It reads the goroutines' stacks,
// polling.
func waitBlockedIn(t *testing.T, fn string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	buf := make([]byte, 1<<20)
	for {
		n := goruntime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			header, _, _ := strings.Cut(g, "\n")
			if strings.Contains(g, "berth/sources/filesource."+fn+"(") && strings.Contains(header, "[select") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no goroutine blocked in %s within 5 s", fn)
		}
		time.Sleep(time.Millisecond)
	}
}

func write(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func podImage(u sources.Update, name string) string {
	for _, d := range u.Pods {
		if d.Pod.Name == name {
			return d.Pod.Spec.Containers[0].Image
		}
	}
	return ""
}
