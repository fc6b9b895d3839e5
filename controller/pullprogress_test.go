package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/runtime"
)

// A running pull's progress shows in the waiting container's message, and
// its end in a Pulled event with the bytes downloaded.
func TestPullProgressInStatus(t *testing.T) {
	h := newHarness(t)
	rec := events.NewBuffer(100)
	cfg := h.ctrl.cfg
	cfg.Events = rec
	h.ctrl = New(cfg, h.st, h.rt, nil)
	block := make(chan struct{})
	h.rt.PullBlock = block
	h.rt.PullSteps = []runtime.PullProgress{
		{Done: 1 << 20, Total: 4 << 20, Layers: 2},
		{Done: 3 << 20, Total: 5 << 20, Layers: 2, LayersDone: 1},
	}
	h.put(testPod("slow", ctr("a", "remote:1")))
	h.reconcile("default/slow")
	deadline := time.Now().Add(5 * time.Second)
	for h.ctrl.images.State("01234567-89ab-cdef-0000-slow/a").Progress == "" {
		if time.Now().After(deadline) {
			t.Fatal("pull progress never recorded")
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.reconcile("default/slow")
	p, _ := h.st.Pod(nil, "default/slow")
	w := p.Status.ContainerStatuses[0].State.Waiting
	if w == nil || w.Reason != "ContainerCreating" || w.Message != `Pulling image "remote:1": 3.0 MiB of 5.0 MiB (1/2 layers)` {
		t.Fatalf("waiting state %+v", p.Status.ContainerStatuses[0].State)
	}
	close(block)
	h.waitPulls()
	h.settle("default/slow")
	if h.running("default/slow")["a"] == nil {
		t.Fatal("pod not started after its pull")
	}
	var pulled string
	for _, e := range rec.List() {
		if e.Reason == "Pulled" {
			pulled = e.Message
		}
	}
	if !strings.Contains(pulled, `Successfully pulled image "remote:1"`) || !strings.Contains(pulled, "(5242880 bytes downloaded)") {
		t.Fatalf("Pulled event %q", pulled)
	}
}
