package store

import (
	"testing"
	"time"

	"github.com/berth-dev/berth/events"
)

// The store keeps the newest MaxEvents events, each with the pod it was
// recorded for when that pod (its UID and source) is stored; the oldest
// goes as a removal watches see.
func TestEventsBoundedAndOwned(t *testing.T) {
	s, _ := New(nil)
	_ = s.UpsertPod(uidPod("push", "web", "u1"))
	rec := EventRecorder{Store: s}
	t0 := time.Unix(1000, 0)
	rec.Record(events.Event{Time: t0, Namespace: "default", Pod: "web", PodUID: "u1", Source: "push", Reason: "Started"})
	rec.Record(events.Event{Time: t0, Namespace: "default", Pod: "web", PodUID: "u0", Source: "push", Reason: "Old"})
	rows, _ := s.Snapshot().Events(nil)
	if len(rows) != 2 || rows[0].Pod == nil || rows[1].Pod != nil || rows[0].Key == rows[1].Key {
		t.Fatalf("rows %+v", rows)
	}
	if err := s.DeletePod("default/web"); err != nil {
		t.Fatal(err)
	}
	if rows, _ := s.Snapshot().Events(nil); rows[0].Pod != nil {
		t.Fatal("an event keeps the pod it was recorded for after the pod went")
	}
	first := s.Index()
	for i := range MaxEvents {
		rec.Record(events.Event{Time: t0.Add(time.Duration(i+1) * time.Second), Namespace: "default", Pod: "db", Reason: "Pulled"})
	}
	list := rec.List()
	if len(list) != MaxEvents || list[0].Reason != "Pulled" {
		t.Fatalf("%d events kept, oldest %q", len(list), list[0].Reason)
	}
	cs, err := s.Snapshot().Changes(first, TableEvents)
	if err != nil {
		t.Fatal(err)
	}
	removed := 0
	for _, c := range cs {
		if c.Deleted != nil {
			removed++
		}
	}
	if removed != 2 {
		t.Fatalf("%d removals, want the 2 oldest", removed)
	}
}
