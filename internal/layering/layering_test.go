package layering

import (
	"slices"
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
		{"validation", "manifest", "validation (layer 1) imports manifest (layer 1)"},
		{"store", "validation", "store (layer 1) imports validation (layer 1)"},
		{"kubeapi/stream", "kubeapi", "kubeapi/stream (layer 2) imports kubeapi (layer 2)"},
		{"sources", "kubeapi/stream", "sources (layer 2) imports kubeapi/stream (layer 2)"},
		{"newpkg", "model", "newpkg: not placed in a layer"},
	} {
		bad := Check(map[string][]string{tc.pkg: {tc.imp}})
		if len(bad) != 1 || !strings.Contains(bad[0], tc.want) {
			t.Errorf("%s importing %s: %q, want one finding containing %q", tc.pkg, tc.imp, bad, tc.want)
		}
	}
	if bad := Check(map[string][]string{"controller": {"store", "podconfig"}, "test/e2e": {"runtime/fake"}, "": {"cli"},
		"manifest": {"validation", "model"}}); len(bad) != 0 {
		t.Errorf("allowed imports reported: %q", bad)
	}
}

// Beneath orders packages of one layer, without a cycle: nothing a package
// may import from its own layer, however far down, is the package itself.
func TestBeneathIsAnOrderWithinALayer(t *testing.T) {
	for pkg := range Beneath {
		below, stack := map[string]bool{}, slices.Clone(Beneath[pkg])
		for len(stack) > 0 {
			imp := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			switch {
			case imp == pkg:
				t.Fatalf("Beneath: %s is beneath itself", pkg)
			case Layers[imp] != Layers[pkg]:
				t.Errorf("Beneath: %s (layer %d) and %s (layer %d) are not of one layer", pkg, Layers[pkg], imp, Layers[imp])
			case !below[imp]:
				below[imp] = true
				stack = append(stack, Beneath[imp]...)
			}
		}
	}
}
