package e2e

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestResourceVersionsAcrossRestart: resourceVersions come from one
// counter across kinds, a watch resumes from one, and after a restart of
// berth a client resuming from a version of the last run is told 410
// (Expired) and relists, never served a silent gap; versions of the new
// run are newer than any of the last.
func TestResourceVersionsAcrossRestart(t *testing.T) {
	k := startKubectlEnv(t, "BERTH_SOURCES_PUSH_ENABLED=true")
	rv := func(args ...string) uint64 {
		t.Helper()
		r := k.ok(t, append(append([]string{"get"}, args...), "-o", "jsonpath={.metadata.resourceVersion}")...)
		n, err := strconv.ParseUint(strings.TrimSpace(r.stdout), 10, 64)
		if err != nil {
			t.Fatalf("resourceVersion of %v: %s", args, r)
		}
		return n
	}
	k.ok(t, "create", "configmap", "rv-a", "--from-literal=k=1")
	k.ok(t, "create", "secret", "generic", "rv-s", "--from-literal=k=1")
	k.ok(t, "create", "configmap", "rv-b", "--from-literal=k=1")
	a, s, b := rv("configmap", "rv-a"), rv("secret", "rv-s"), rv("configmap", "rv-b")
	if !(a < s && s < b) {
		t.Fatalf("versions of three writes in order, across kinds: %d %d %d", a, s, b)
	}
	listRV := func() uint64 {
		t.Helper()
		r := k.ok(t, "get", "--raw", "/api/v1/namespaces/default/configmaps")
		var l struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
			t.Fatalf("list: %v: %s", err, r)
		}
		n, err := strconv.ParseUint(l.Metadata.ResourceVersion, 10, 64)
		if err != nil {
			t.Fatalf("list's resourceVersion: %s", r)
		}
		return n
	}
	list := listRV()
	if list < b {
		t.Fatalf("a list at %d, before its newest object's %d", list, b)
	}

	watchFrom := func(from uint64) kubectlRun {
		t.Helper()
		return k.run(t, "", "get", "--raw", "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1&resourceVersion="+strconv.FormatUint(from, 10))
	}
	if r := watchFrom(a); r.code != 0 || !strings.Contains(r.stdout, `"type":"ADDED"`) || !strings.Contains(r.stdout, `"rv-b"`) ||
		strings.Contains(r.stdout, `"name":"rv-a"`) {
		t.Fatalf("a watch resumed after rv-a's version sees rv-b's creation only: %s", r)
	}

	k.b.Stop(t)
	k.b.Start(t)
	k.kubeconfig = k.writeKubeconfig(t, k.tokenFile)
	if r := watchFrom(list); r.code == 0 || !strings.Contains(r.stderr, "Expired") {
		t.Fatalf("a watch resuming at the last run's version %d: %s, want 410 Expired", list, r)
	}
	if after := listRV(); after <= list {
		t.Fatalf("the new run lists at %d, not after the last run's %d", after, list)
	}
	if got := rv("configmap", "rv-a"); got <= list {
		t.Fatalf("rv-a served at %d after the restart, not newer than the last run's %d", got, list)
	}
}
