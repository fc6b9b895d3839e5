package manifest

import (
	"testing"

	"github.com/berth-dev/berth/model"
)

func TestDerivedUIDDependsOnNode(t *testing.T) {
	m := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: same}\nspec:\n  containers: [{name: a, image: 'img:1'}]\n")
	uid := func(node string, data []byte) string {
		t.Helper()
		pods, errs := Decode("file", "same.yaml", data, Options{Node: node})
		if len(errs) > 0 || len(pods) != 1 {
			t.Fatalf("decode: %v", errs)
		}
		return string(pods[0].Pod.UID)
	}
	a, b := uid("node-a", m), uid("node-b", m)
	if a == b {
		t.Fatalf("two nodes derive the same UID %s", a)
	}
	edited := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: same}\nspec:\n  containers: [{name: a, image: 'img:2'}]\n")
	if uid("node-a", edited) != a {
		t.Fatal("an edit changed the derived UID")
	}
	if uid("", m) != string(PodUID("file", "default", "same")) {
		t.Fatal("without a node the UID is not PodUID(source, ns, name)")
	}
}

func TestAddedCapabilitiesAreHostAccess(t *testing.T) {
	m := []byte(`apiVersion: v1
kind: Pod
metadata: {name: caps}
spec:
  containers:
  - name: a
    image: 'img:1'
    securityContext: {capabilities: {add: [NET_BIND_SERVICE, SYS_ADMIN, CAP_SYS_MODULE]}}
`)
	_, errs := Decode("http", "u", m, Options{})
	if len(errs) != 2 || errs[0].Field != "spec.containers[0].securityContext.capabilities.add[1]" ||
		errs[1].Field != "spec.containers[0].securityContext.capabilities.add[2]" {
		t.Fatalf("errors %v", errs)
	}
	if _, errs := Decode("http", "u", m, Options{Level: model.LevelPrivileged}); len(errs) != 0 {
		t.Fatalf("with host access: %v", errs)
	}
}
