package controller

import (
	"testing"
	"time"

	"github.com/berth-dev/berth/images"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/runtime/fake"
	"github.com/berth-dev/berth/store"
)

// The engine's create event can come in after the start call was sent
// (its sequence is newer than the one read before the start). The start's
// answer still wins over that created row: a reconcile reading it would
// otherwise start the container again (and restart one that exited). A
// newer state than created (the start or die event) stays.
func TestStartWinsOverLateCreateEvent(t *testing.T) {
	st, _ := store.New(nil)
	o := &observer{store: st, images: images.New(images.Config{Engine: fake.New(nil)})}
	cfg := &runtime.ContainerConfig{Name: "c", Image: "img", Labels: map[string]string{runtime.LabelPodName: "web"}}
	created := func(id string) {
		if _, err := st.ApplyEvent(id, func(*model.Container) (*model.Container, bool) {
			return &model.Container{ID: id, State: model.StateCreated}, true
		}); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Unix(100, 0)

	s0 := st.Seq()
	s1 := st.Seq()
	created("late") // applied after s1 was read
	o.observe("late", cfg, at, at, s0, s1, nil)
	if ct, _ := st.Container(nil, "late"); ct == nil || ct.State != model.StateRunning || !ct.StartedAt.Equal(at) {
		t.Fatalf("after a successful start the row is %+v, want running", ct)
	}

	s0, s1 = st.Seq(), st.Seq()
	created("died")
	if _, err := st.ApplyEvent("died", func(old *model.Container) (*model.Container, bool) {
		cp := *old
		cp.State = model.StateExited
		return &cp, true
	}); err != nil {
		t.Fatal(err)
	}
	o.observe("died", cfg, at, at, s0, s1, nil)
	if ct, _ := st.Container(nil, "died"); ct == nil || ct.State != model.StateExited {
		t.Fatalf("a die event after the start was overwritten: %+v", ct)
	}
}
