package controller

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/model"
)

// Every event names the pod incarnation it is about (UID and source), so
// the API never shows a pod the events of an earlier pod of its name: a
// trusted pod replaced by a push pod of the same key has its stop events
// recorded under its own UID and source, the push pod's starts under
// the push pod's.
func TestEventsNameIncarnation(t *testing.T) {
	h := newHarness(t)
	rec := events.NewBuffer(100)
	h.ctrl.cfg.Events = rec
	if err := h.st.UpsertSource(&model.Source{Name: "push", Synced: true}); err != nil {
		t.Fatal(err)
	}
	trusted := testPod("web", ctr("a", "app:1"))
	h.put(trusted)
	h.settle("default/web")
	pushed := testPod("web", ctr("a", "app:2"))
	pushed.UID = types.UID("01234567-89ab-cdef-1111-pushed")
	if err := h.st.DeletePod("default/web"); err != nil {
		t.Fatal(err)
	}
	if err := h.st.UpsertPod(&model.Pod{Key: "default/web", Source: "push", Spec: pushed, SeenAt: h.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	h.settle("default/web")
	if h.running("default/web")["a"] == nil || h.running("default/web")["a"].PodUID != string(pushed.UID) {
		t.Fatalf("the pushed pod does not run: %v", h.running("default/web"))
	}
	if err := h.st.DeletePod("default/web"); err != nil {
		t.Fatal(err)
	}
	h.settle("default/web")

	type inc struct{ uid, source string }
	for _, e := range rec.List() {
		got := inc{e.PodUID, e.Source}
		if e.Namespace != "default" || e.Pod != "web" || (got != inc{string(trusted.UID), "file"} && got != inc{string(pushed.UID), "push"}) {
			t.Errorf("event %s %q names %+v", e.Reason, e.Message, got)
		}
	}
	var trustedStarts, trustedKills, pushedKills, pushedStarts int
	for _, e := range rec.List() {
		switch {
		case e.Reason == "Started" && e.PodUID == string(trusted.UID):
			trustedStarts++
		case e.Reason == "Killing" && e.PodUID == string(trusted.UID):
			trustedKills++
		case e.Reason == "Killing" && e.PodUID == string(pushed.UID):
			pushedKills++
		case e.Reason == "Started" && e.PodUID == string(pushed.UID):
			pushedStarts++
		}
	}
	if trustedStarts == 0 || trustedKills == 0 || pushedKills == 0 || pushedStarts == 0 {
		t.Errorf("trusted pod: %d Started, %d Killing; pushed pod: %d Started, %d Killing; events %+v",
			trustedStarts, trustedKills, pushedStarts, pushedKills, rec.List())
	}
}
