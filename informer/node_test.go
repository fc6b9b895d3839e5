package informer

import (
	"slices"
	"testing"

	"github.com/berth-dev/berth/admission"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/sources"
)

// The informer's Node reaches admission: a pod selecting a label the node
// lacks is refused into the source's errors, and a nodeName warning joins
// them while its pod runs, counted as no manifest error.
func TestNodeFitThroughInformer(t *testing.T) {
	inf, st, m, _ := newInformer(t)
	inf.Node = &admission.Node{Name: "n1", OS: "linux", Labels: map[string]string{"disk": "ssd"}}
	picky := pod("picky", "img:1", 0)
	picky.Pod.Spec.NodeSelector = map[string]string{"disk": "hdd"}
	elsewhere := pod("elsewhere", "img:1", 0)
	elsewhere.Pod.Spec.NodeName = "n2"
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{picky, elsewhere}})
	pods, _ := st.Pods(nil)
	if len(pods) != 1 || pods[0].Key != "default/elsewhere" {
		t.Fatalf("stored %d pods, want only default/elsewhere", len(pods))
	}
	src, _ := st.Source(nil, "file")
	want := []string{
		`elsewhere.yaml: default/elsewhere: spec.nodeName: "n2" is not this node ("n1"); berth runs the pod here all the same`,
		"picky.yaml: default/picky: NodeAffinity: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
	}
	if !slices.Equal(src.Errors, want) {
		t.Fatalf("source errors %q\nwant %q", src.Errors, want)
	}
	if m.manifestErrs["file"] != 1 {
		t.Fatalf("%d manifest errors counted, want 1 (the refusal)", m.manifestErrs["file"])
	}
}
