package sources

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
)

// startSource runs s until the test ends and returns its updates.
func startSource(t *testing.T, s Source) <-chan Update {
	t.Helper()
	return testutil.StartRun(t, s.Run)
}

// runReturned is testutil.RunReturned.
func runReturned(t *testing.T, done <-chan error, late string) {
	t.Helper()
	testutil.RunReturned(t, done, late)
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

// waitBlockedIn waits until a goroutine is blocked in a select in fn, a
// function of this package (as "(*HTTPSource).fetch").
func waitBlockedIn(t *testing.T, fn string) {
	t.Helper()
	testutil.WaitBlockedIn(t, "berth/sources."+fn)
}
