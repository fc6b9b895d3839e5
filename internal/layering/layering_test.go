package layering

import (
	"strings"
	"testing"
)

func TestBerthKeepsItsLayers(t *testing.T) {
	graph, err := Graph("../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(graph) < 20 || graph["controller"] == nil {
		t.Fatalf("read %d packages, controller imports %v: not berth's tree", len(graph), graph["controller"])
	}
	for _, b := range Check(graph) {
		t.Error(b)
	}
}

// The rule itself: each broken import the architecture names is caught.
func TestCheckCatchesBrokenImports(t *testing.T) {
	for _, tc := range []struct {
		pkg, imp, want string
	}{
		{"manifest", "controller", "manifest (layer 1) imports controller (layer 3)"},
		{"model", "store", "model (layer 0) imports store (layer 1)"},
		{"sources", "informer", "sources (layer 2) imports informer (layer 3)"},
		{"controller", "runtime/fake", "controller imports runtime/fake: only tests and tools may"},
		{"controller", "controller/sub", "controller imports controller/sub, which is not placed"},
		{"store", "store", "store (layer 1) imports store (layer 1)"},
		{"newpkg", "model", "newpkg: not placed in a layer"},
	} {
		bad := Check(map[string][]string{tc.pkg: {tc.imp}})
		if len(bad) != 1 || !strings.Contains(bad[0], tc.want) {
			t.Errorf("%s importing %s: %q, want one finding containing %q", tc.pkg, tc.imp, bad, tc.want)
		}
	}
	if bad := Check(map[string][]string{"controller": {"store", "podconfig"}, "test/e2e": {"runtime/fake"}, "": {"cli"}}); len(bad) != 0 {
		t.Errorf("allowed imports reported: %q", bad)
	}
}
