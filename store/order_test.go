package store

import (
	"testing"

	"github.com/berth-dev/berth/model"
)

// exitEvent is a die event's change: the container exited with code.
func exitEvent(code int) func(old *model.Container) (*model.Container, bool) {
	return func(old *model.Container) (*model.Container, bool) {
		cp := *old
		cp.State, cp.ExitCode = model.StateExited, code
		return &cp, true
	}
}

// An inspect sent before an event but answered after it must not win: the
// engine said the container exited; the older "running" stays refused.
func TestOlderObservationIsRefused(t *testing.T) {
	s, _ := New(nil)
	if ok, _ := s.UpsertContainer(&model.Container{ID: "c", PodKey: "default/a", State: model.StateRunning, Seq: s.Seq()}); !ok {
		t.Fatal("first write refused")
	}
	inspectSent := s.Seq()
	// The die event arrives while the inspect is in flight.
	ok, err := s.ApplyEvent("c", exitEvent(1))
	if !ok || err != nil {
		t.Fatalf("event refused: %v %v", ok, err)
	}
	// The inspect, answered now, still says running.
	if ok, _ := s.UpsertContainer(&model.Container{ID: "c", PodKey: "default/a", State: model.StateRunning, Seq: inspectSent}); ok {
		t.Fatal("an older inspect overwrote a newer event")
	}
	c, _ := s.Container(nil, "c")
	if c.State != model.StateExited || c.ExitCode != 1 || c.Seq != s.Seq() || s.Seq() != inspectSent+1 {
		t.Fatalf("row %+v at seq %d", c, s.Seq())
	}
	// A newer observation wins, and fn sees the held row.
	var seen *model.Container
	if ok, _ := s.ApplyContainer("c", s.Seq(), func(old *model.Container) (*model.Container, bool) {
		seen = old
		return &model.Container{ID: "c", PodKey: "default/a"}, true
	}); !ok || seen != c {
		t.Fatal("newer write refused or fn not given the held row")
	}
	// fn may decline: nothing is written, nothing notified, no sequence
	// taken.
	if ok, _ := s.ApplyEvent("c", func(old *model.Container) (*model.Container, bool) { return nil, false }); ok {
		t.Fatal("a declined write was written")
	}
	if c, _ := s.Container(nil, "c"); c == nil || c.Seq != inspectSent+1 || s.Seq() != inspectSent+1 {
		t.Fatalf("declined write changed the row: %+v at seq %d", c, s.Seq())
	}
}

func TestDeletionIsNotUndoneByAnOlderInspect(t *testing.T) {
	s, _ := New(nil)
	_, _ = s.UpsertContainer(&model.Container{ID: "c", PodKey: "default/a", State: model.StateRunning})
	inspectSent := s.Seq()
	if _, err := s.ApplyEvent("c", func(*model.Container) (*model.Container, bool) { return nil, true }); err != nil { // destroy event
		t.Fatal(err)
	}
	if ok, _ := s.UpsertContainer(&model.Container{ID: "c", PodKey: "default/a", State: model.StateRunning, Seq: inspectSent}); ok {
		t.Fatal("an inspect older than the deletion brought the container back")
	}
	if c, _ := s.Container(nil, "c"); c != nil {
		t.Fatalf("deleted container back: %+v", c)
	}
	// An older deletion of a newer row is refused too.
	removeSent := s.Seq()
	_, _ = s.ApplyEvent("d", func(*model.Container) (*model.Container, bool) {
		return &model.Container{ID: "d", PodKey: "default/a"}, true
	})
	_ = s.DeleteContainer("d", removeSent)
	if c, _ := s.Container(nil, "d"); c == nil {
		t.Fatal("an older deletion removed a newer row")
	}
	if n := tombstones(s); n != 1 {
		t.Fatalf("%d tombstones, want 1", n)
	}
	if err := s.PruneTombstones(removeSent); err != nil { // the deletion is at removeSent: kept
		t.Fatal(err)
	}
	if n := tombstones(s); n != 1 {
		t.Fatalf("%d tombstones after pruning older ones, want 1", n)
	}
	if err := s.PruneTombstones(removeSent + 1); err != nil {
		t.Fatal(err)
	}
	if n := tombstones(s); n != 0 {
		t.Fatalf("%d tombstones after pruning, want 0", n)
	}
}

func TestRefusedWriteDoesNotNotify(t *testing.T) {
	var got []string
	s, _ := New(func(k string) { got = append(got, k) })
	sent := s.Seq()
	_, _ = s.ApplyEvent("c", func(*model.Container) (*model.Container, bool) {
		return &model.Container{ID: "c", PodKey: "default/a"}, true
	})
	got = nil
	_, _ = s.UpsertContainer(&model.Container{ID: "c", PodKey: "default/a", Seq: sent})
	if len(got) != 0 {
		t.Fatalf("refused write notified %v", got)
	}
}

// Answers asked for with no event in between are all taken, the last
// written winning: the sequence orders answers against events only.
func TestAnswersWithoutEventsBetweenAreTaken(t *testing.T) {
	s, _ := New(nil)
	seq := s.Seq()
	for _, st := range []string{model.StateCreated, model.StateRunning, model.StateExited} {
		if ok, _ := s.UpsertContainer(&model.Container{ID: "c", PodKey: "default/a", State: st, Seq: seq}); !ok {
			t.Fatalf("answer %s refused", st)
		}
	}
	if c, _ := s.Container(nil, "c"); c.State != model.StateExited {
		t.Fatalf("row %+v", c)
	}
}

// tombstones returns how many deletions are remembered.
func tombstones(s *Store) int {
	txn := s.db.Txn(false)
	it, err := txn.Get(TableTombstones, IndexID)
	if err != nil {
		return 0
	}
	n := 0
	for raw := it.Next(); raw != nil; raw = it.Next() {
		n++
	}
	return n
}
