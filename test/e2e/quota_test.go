package e2e

import (
	"strings"
	"testing"
)

// TestKubectlOverQuotaIsForbidden: with a push token, kubectl creates
// ConfigMaps up to the push source's quota; the next one is refused as a
// ResourceQuota refuses it (Forbidden, the quota named) and nothing of it
// is kept, while the earlier ones stay served. A server dry run is checked
// too; a delete makes room again.
func TestKubectlOverQuotaIsForbidden(t *testing.T) {
	pushFile, _ := writeToken(t, "push")
	k := startKubectlEnv(t, "BERTH_SOURCES_PUSH_ENABLED=true", "BERTH_SOURCES_PUSH_TOKEN_FILE="+pushFile,
		"BERTH_SOURCES_PUSH_QUOTA_OBJECTS=2", "BERTH_SOURCES_PUSH_QUOTA_PODS=1")
	push := k.writeKubeconfig(t, pushFile)
	create := func(name string, extra ...string) kubectlRun {
		return k.runWith(t, push, "", append([]string{"create", "configmap", name, "--from-literal=k=v"}, extra...)...)
	}
	for _, name := range []string{"q1", "q2"} {
		if r := create(name); r.code != 0 || r.stdout != "configmap/"+name+" created\n" {
			t.Fatalf("create within the quota: %s", r)
		}
	}
	over := `configmaps "q3" is forbidden: exceeded quota: push, requested: objects=1, used: objects=2, limited: objects=2`
	for _, extra := range [][]string{{"--dry-run=server"}, nil} {
		r := create("q3", extra...)
		if r.code != 1 || !strings.Contains(r.stderr, over) {
			t.Fatalf("create over the quota %v: %s\nwant stderr containing %q", extra, r, over)
		}
		t.Logf("over the quota %v: %s", extra, strings.TrimSpace(r.stderr))
	}
	if r := k.runWith(t, push, "", "get", "configmaps", "q1", "q2", "-o", "name"); r.code != 0 || r.stdout != "configmap/q1\nconfigmap/q2\n" {
		t.Fatalf("the ConfigMaps within the quota: %s", r)
	}
	if r := k.runWith(t, push, "", "get", "configmap", "q3"); r.code != 1 || !strings.Contains(r.stderr, "(NotFound)") {
		t.Fatalf("the refused ConfigMap: %s", r)
	}

	// Pods have their own count; a server dry run is refused as the write.
	if r := k.runWith(t, push, "", "run", "qp1", "--image="+testImage, "--restart=Never", "--", "sleep"); r.code != 0 {
		t.Fatalf("first pod: %s", r)
	}
	r := k.runWith(t, push, "", "run", "qp2", "--image="+testImage, "--restart=Never", "--dry-run=server", "--", "sleep")
	if want := `pods "qp2" is forbidden: exceeded quota: push, requested: pods=1, used: pods=1, limited: pods=1`; r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Fatalf("second pod, dry run: %s\nwant stderr containing %q", r, want)
	}

	if r := k.runWith(t, push, "", "delete", "configmap", "q1"); r.code != 0 {
		t.Fatalf("delete: %s", r)
	}
	if r := create("q3"); r.code != 0 {
		t.Fatalf("create after a delete: %s", r)
	}
}
