package store

import (
	"testing"
	"time"

	"github.com/berth-dev/berth/model"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// An inspect sent before an event but answered after it must not win: the
// engine said the container exited; the older "running" stays refused.
func TestOlderObservationIsRefused(t *testing.T) {
	s, _ := New(nil)
	if ok, _ := s.UpsertContainer(&model.Container{ID: "c", PodKey: "default/a", State: model.StateRunning, ObservedAt: at(10)}); !ok {
		t.Fatal("first write refused")
	}
	// The die event at 30 ms.
	ok, err := s.ApplyContainer("c", at(30), func(old *model.Container) (*model.Container, bool) {
		cp := *old
		cp.State, cp.ExitCode = model.StateExited, 1
		return &cp, true
	})
	if !ok || err != nil {
		t.Fatalf("event refused: %v %v", ok, err)
	}
	// An inspect sent at 20 ms, answered now, still says running.
	if ok, _ := s.UpsertContainer(&model.Container{ID: "c", PodKey: "default/a", State: model.StateRunning, ObservedAt: at(20)}); ok {
		t.Fatal("an older inspect overwrote a newer event")
	}
	c, _ := s.Container(nil, "c")
	if c.State != model.StateExited || c.ExitCode != 1 || !c.ObservedAt.Equal(at(30)) {
		t.Fatalf("row %+v", c)
	}
	// A newer observation wins, and fn sees the held row.
	var seen *model.Container
	if ok, _ := s.ApplyContainer("c", at(40), func(old *model.Container) (*model.Container, bool) {
		seen = old
		return &model.Container{ID: "c", PodKey: "default/a"}, true
	}); !ok || seen != c {
		t.Fatal("newer write refused or fn not given the held row")
	}
	// fn may decline: nothing is written, nothing notified.
	if ok, _ := s.ApplyContainer("c", at(50), func(old *model.Container) (*model.Container, bool) { return nil, false }); ok {
		t.Fatal("a declined write was written")
	}
	if c, _ := s.Container(nil, "c"); c == nil || !c.ObservedAt.Equal(at(40)) {
		t.Fatalf("declined write changed the row: %+v", c)
	}
}

func TestDeletionIsNotUndoneByAnOlderInspect(t *testing.T) {
	s, _ := New(nil)
	_, _ = s.UpsertContainer(&model.Container{ID: "c", PodKey: "default/a", State: model.StateRunning, ObservedAt: at(10)})
	if err := s.DeleteContainer("c", at(30)); err != nil { // destroy event
		t.Fatal(err)
	}
	if ok, _ := s.UpsertContainer(&model.Container{ID: "c", PodKey: "default/a", State: model.StateRunning, ObservedAt: at(20)}); ok {
		t.Fatal("an inspect older than the deletion brought the container back")
	}
	if c, _ := s.Container(nil, "c"); c != nil {
		t.Fatalf("deleted container back: %+v", c)
	}
	// An older deletion of a newer row is refused too.
	_, _ = s.UpsertContainer(&model.Container{ID: "d", PodKey: "default/a", ObservedAt: at(50)})
	_ = s.DeleteContainer("d", at(40))
	if c, _ := s.Container(nil, "d"); c == nil {
		t.Fatal("an older deletion removed a newer row")
	}
	if n := s.Tombstones(); n != 1 {
		t.Fatalf("%d tombstones, want 1", n)
	}
	if err := s.PruneTombstones(at(31)); err != nil {
		t.Fatal(err)
	}
	if n := s.Tombstones(); n != 0 {
		t.Fatalf("%d tombstones after pruning, want 0", n)
	}
}

func TestRefusedWriteDoesNotNotify(t *testing.T) {
	var got []string
	s, _ := New(func(k string) { got = append(got, k) })
	_, _ = s.UpsertContainer(&model.Container{ID: "c", PodKey: "default/a", ObservedAt: at(20)})
	got = nil
	_, _ = s.UpsertContainer(&model.Container{ID: "c", PodKey: "default/a", ObservedAt: at(10)})
	if len(got) != 0 {
		t.Fatalf("refused write notified %v", got)
	}
}
