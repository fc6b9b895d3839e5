package sources

import (
	"context"
	"fmt"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// startSource runs s until the test ends and returns its updates.
func startSource(t *testing.T, s Source) <-chan Update {
	t.Helper()
	out, stop := runStoppable(t, s)
	t.Cleanup(stop)
	return out
}

// runStoppable runs s until stop, which waits for Run to return (as a
// restart of berth ends its sources); stop may be called more than once.
func runStoppable(t *testing.T, s Source) (<-chan Update, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan Update)
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

// await returns the first update that satisfies ok, failing after timeout.
func await(t *testing.T, updates <-chan Update, timeout time.Duration, what string, ok func(Update) bool) Update {
	t.Helper()
	deadline := time.After(timeout)
	var last Update
	n := 0
	for {
		select {
		case u := <-updates:
			n++
			if ok(u) {
				return u
			}
			last = u
		case <-deadline:
			t.Fatalf("timed out waiting for %s after %d updates; last %s", what, n, describeFull(last))
		}
	}
}

func describeFull(u Update) string {
	if u.Err != nil {
		return fmt.Sprintf("Err %v", u.Err)
	}
	return fmt.Sprintf("pods %v errors %v warnings %v", podNames(u), u.Errors, u.Warnings)
}

// exactly matches a good update (no Err, no errors) with these pod names.
func exactly(names ...string) func(Update) bool {
	slices.Sort(names)
	return func(u Update) bool {
		got := podNames(u)
		return u.Err == nil && len(u.Errors) == 0 && (slices.Equal(got, names) || (len(got) == 0 && len(names) == 0))
	}
}

func failedWith(substr string) func(Update) bool {
	return func(u Update) bool { return u.Err != nil && strings.Contains(u.Err.Error(), substr) }
}

func podImage(u Update, name string) string {
	for _, d := range u.Pods {
		if d.Pod.Name == name {
			return d.Pod.Spec.Containers[0].Image
		}
	}
	return ""
}

// hostAccessCases are manifests a network source may only run at
// pod_security privileged, and the field their error names.
var hostAccessCases = []struct{ name, manifest, field, pod string }{
	{"privileged", "apiVersion: v1\nkind: Pod\nmetadata: {name: priv}\nspec:\n  containers:\n  - name: c\n    image: busybox\n    securityContext: {privileged: true}\n",
		"spec.containers[0].securityContext.privileged", "priv"},
	{"hostPath", "apiVersion: v1\nkind: Pod\nmetadata: {name: hp}\nspec:\n  volumes: [{name: v, hostPath: {path: /etc}}]\n  containers:\n  - name: c\n    image: busybox\n    volumeMounts: [{name: v, mountPath: /host}]\n",
		"spec.volumes[0].hostPath", "hp"},
	{"hostNetwork", "apiVersion: v1\nkind: Pod\nmetadata: {name: hn}\nspec:\n  hostNetwork: true\n  containers: [{name: c, image: busybox}]\n",
		"spec.hostNetwork", "hn"},
	{"hostPID", "apiVersion: v1\nkind: Pod\nmetadata: {name: hpid}\nspec:\n  hostPID: true\n  containers: [{name: c, image: busybox}]\n",
		"spec.hostPID", "hpid"},
}

// waitBlockedIn waits until a goroutine is blocked in a select in fn (as
// "(*FileSource).scanAndSend"), offering an update nobody takes: the state
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
			if strings.Contains(g, "berth/sources."+fn+"(") && strings.Contains(header, "[select") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no goroutine blocked in %s within 5 s", fn)
		}
		time.Sleep(time.Millisecond)
	}
}
