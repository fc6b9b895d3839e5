package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// replacePod is a pod with a readiness probe whose container takes 4 s to
// stop (a preStop hook), so an edit's replacement is slow enough to watch;
// hostname is a pod-level field: changing it replaces the sandbox.
func replacePod(name, hostname string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  hostname: %s
  terminationGracePeriodSeconds: 10
  containers:
    - name: web
      image: %q
      args: [serve]
      env: [{name: PORT, value: "8080"}]
      readinessProbe:
        httpGet: {path: /ready, port: 8080}
        periodSeconds: 1
      lifecycle:
        preStop: {exec: {command: [/testapp, exit, "0", 4s]}}
`, name, hostname, testImage)
}

// TestKubectlWaitSeesSandboxReplacement: after a pod-level edit, the pod is
// not Ready from the edit's write until its new containers are: kubectl
// wait for Ready=false succeeds at once, get -w prints the pod 0/1, and
// kubectl wait for Ready returns only once the new instance runs (its
// container ID differs from the old one's).
func TestKubectlWaitSeesSandboxReplacement(t *testing.T) {
	need(t)
	k := startKubectlEnv(t, "BERTH_SOURCES_PUSH_ENABLED=true")
	if r := k.run(t, replacePod("swap", "first"), "apply", "-f", "-"); r.code != 0 {
		t.Fatalf("apply: %s", r)
	}
	k.ok(t, "wait", "--for=condition=Ready", "pod/swap", "--timeout=60s")
	idPath := "jsonpath={.status.containerStatuses[0].containerID}"
	oldID := k.ok(t, "get", "pod", "swap", "-o", idPath).stdout
	if oldID == "" {
		t.Fatal("no containerID once Ready")
	}

	w := k.start(t, "get", "pod", "swap", "-w", "--no-headers")
	w.waitLine(t, "the ready pod listed", func(l string) bool { return strings.Contains(l, "1/1") })

	if r := k.run(t, replacePod("swap", "second"), "apply", "-f", "-"); r.code != 0 {
		t.Fatalf("apply of the edit: %s", r)
	}
	// The edit's own write says the pod is no longer ready.
	k.ok(t, "wait", "--for=condition=Ready=false", "pod/swap", "--timeout=5s")
	w.waitLine(t, "the replaced pod listed not ready", func(l string) bool { return strings.Contains(l, "0/1") })
	// The old instance still runs its preStop hook: its log is served.
	if r := k.run(t, "", "logs", "swap"); r.code != 0 || !strings.Contains(r.stdout, "testapp serve starting") {
		t.Errorf("logs while the sandbox is replaced: %s", r)
	}

	k.ok(t, "wait", "--for=condition=Ready", "pod/swap", "--timeout=60s")
	newID := k.ok(t, "get", "pod", "swap", "-o", idPath).stdout
	if newID == "" || newID == oldID {
		t.Fatalf("kubectl wait returned Ready with container %q, the instance before the edit was %q", newID, oldID)
	}
	if host := k.ok(t, "get", "pod", "swap", "-o", "jsonpath={.spec.hostname}").stdout; host != "second" {
		t.Errorf("hostname %q after the edit", host)
	}
	w.interrupt(t)
}
