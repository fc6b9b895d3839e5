package store

import (
	"strconv"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

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
		rec.Record(events.Event{Time: t0.Add(time.Duration(i+1) * time.Second), Namespace: "default", Pod: "db", Reason: "Pulled", Message: strconv.Itoa(i)})
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

// An event identical to one that last occurred within AggregateWindow is
// another occurrence of it: one row, its count raised and its last time
// moved at a new ModifyIndex (its first time and key kept), the old
// version kept for watches as a modification; past the window, or
// differing in anything but time, it is a new event. A time the recorder
// did not set is the store's clock's.
func TestEventsAggregate(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(5000, 0))
	s, _ := New(nil, WithClock(clk))
	_ = s.UpsertPod(uidPod("file", "web", "u1"))
	rec := EventRecorder{Store: s}
	fail := events.Event{Namespace: "default", Pod: "web", PodUID: "u1", Source: "file", Container: "app", Type: events.Warning,
		Reason: "Failed", Message: "Error: create failed"}
	rec.Record(fail)
	rows, _ := s.Snapshot().Events(nil)
	if len(rows) != 1 || !rows[0].Event.Time.Equal(clk.Now()) || rows[0].Count != 1 {
		t.Fatalf("first occurrence: %+v", rows)
	}
	first := rows[0]
	since := s.Index()
	for i := 1; i <= 4; i++ {
		clk.Step(30 * time.Second)
		rec.Record(fail)
	}
	rows, _ = s.Snapshot().Events(nil)
	if len(rows) != 1 {
		t.Fatalf("%d rows for one event occurring 5 times", len(rows))
	}
	r := rows[0]
	count, firstAt, lastAt := r.Occurrences()
	if count != 5 || !firstAt.Equal(time.Unix(5000, 0)) || !lastAt.Equal(clk.Now()) || r.Key != first.Key || r.Pod == nil {
		t.Fatalf("count %d first %v last %v key %s (was %s) pod %v", count, firstAt, lastAt, r.Key, first.Key, r.Pod)
	}
	if r.CreateIndex != first.CreateIndex || r.ModifyIndex <= first.ModifyIndex {
		t.Fatalf("version %+v, first %+v", r.Version, first.Version)
	}
	cs, err := s.Snapshot().Changes(since, TableEvents)
	if err != nil || len(cs) != 1 || cs[0].Deleted != nil || cs[0].Old == nil || cs[0].Old.(*EventRow).Count != 1 {
		t.Fatalf("changes %+v, %v: want one modification from the first version", cs, err)
	}

	other := fail
	other.Message = "Error: another failure"
	rec.Record(other)
	clk.Step(AggregateWindow + time.Second)
	rec.Record(fail)
	if rows, _ = s.Snapshot().Events(nil); len(rows) != 3 {
		t.Fatalf("%d rows, want the aggregated one, another message and one past the window", len(rows))
	}
	clk.Step(time.Minute)
	rec.Record(fail)
	rows, _ = s.Snapshot().Events(nil)
	counts := map[int32]int{}
	for _, r := range rows {
		c, _, _ := r.Occurrences()
		counts[c]++
	}
	if len(rows) != 3 || counts[5] != 1 || counts[2] != 1 || counts[1] != 1 {
		t.Fatalf("counts %v: the occurrence after the window aggregates into the newer event", counts)
	}

	node := events.Event{Namespace: "default", Node: "n1", Source: "file", Type: events.Warning, Reason: "InvalidManifest", Message: "a.yaml: x"}
	rec.Record(node)
	rec.Record(node)
	rows, _ = s.Snapshot().Events(nil)
	var nodeRows []*EventRow
	for _, r := range rows {
		if r.Event.Node == "n1" {
			nodeRows = append(nodeRows, r)
		}
	}
	if len(nodeRows) != 1 || nodeRows[0].Count != 2 || nodeRows[0].Pod != nil || !strings.HasPrefix(nodeRows[0].Key, "default/n1.") {
		t.Fatalf("node events %+v", nodeRows)
	}
}

// A repeated event is the last to go when the store is full: the least
// recently occurred event goes first.
func TestEventsEvictLeastRecent(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(5000, 0))
	s, _ := New(nil, WithClock(clk))
	rec := EventRecorder{Store: s}
	repeated := events.Event{Namespace: "default", Pod: "db", Reason: "BackOff", Message: "back-off"}
	rec.Record(repeated)
	for i := range MaxEvents - 1 {
		clk.Step(time.Millisecond)
		rec.Record(events.Event{Namespace: "default", Pod: "web", Reason: "Pulled", Message: strconv.Itoa(i)})
	}
	rec.Record(repeated)
	clk.Step(time.Millisecond)
	rec.Record(events.Event{Namespace: "default", Pod: "web", Reason: "Pulled", Message: "last"})
	list := rec.List()
	if len(list) != MaxEvents || list[0].Reason != "BackOff" || list[1].Message != "1" {
		t.Fatalf("%d kept, first %+v, second %+v", len(list), list[0], list[1])
	}
}

// Eviction goes by when an event last occurred: a pod's removal rewrites
// its events (without the pod) but does not make them recent.
func TestEventsEvictByLastOccurrenceNotRewrite(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(5000, 0))
	s, _ := New(nil, WithClock(clk))
	rec := EventRecorder{Store: s}
	_ = s.UpsertPod(uidPod("file", "old", "u1"))
	rec.Record(events.Event{Namespace: "default", Pod: "old", PodUID: "u1", Source: "file", Reason: "Started"})
	for i := range MaxEvents - 1 {
		clk.Step(time.Millisecond)
		rec.Record(events.Event{Namespace: "default", Pod: "web", Reason: "Pulled", Message: strconv.Itoa(i)})
	}
	if err := s.DeletePod("default/old"); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Millisecond)
	rec.Record(events.Event{Namespace: "default", Pod: "web", Reason: "Pulled", Message: "last"})
	list := rec.List()
	if len(list) != MaxEvents || list[0].Reason != "Pulled" || list[0].Message != "0" {
		t.Fatalf("%d kept, oldest %+v: the removed pod's event occurred least recently and goes first", len(list), list[0])
	}
}

// A pod removed and stored again (pod UIDs repeat: they derive from the
// source and the name) starts its own counts: an event of it never
// aggregates into the earlier pod's orphaned row, which stays orphaned;
// an event recorded while no pod is stored aggregates into the orphaned
// row.
func TestEventsOfARecreatedPodStartAfresh(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(5000, 0))
	s, _ := New(nil, WithClock(clk))
	rec := EventRecorder{Store: s}
	fail := events.Event{Namespace: "default", Pod: "web", PodUID: "u1", Source: "file", Container: "app", Type: events.Warning,
		Reason: "Failed", Message: "Error: create failed"}
	_ = s.UpsertPod(uidPod("file", "web", "u1"))
	for range 3 {
		rec.Record(fail)
		clk.Step(time.Minute)
	}
	if err := s.DeletePod("default/web"); err != nil {
		t.Fatal(err)
	}
	rec.Record(fail) // the stopping pod's: no pod stored
	_ = s.UpsertPod(uidPod("file", "web", "u1"))
	clk.Step(time.Minute)
	rec.Record(fail)
	rows, _ := s.Snapshot().Events(nil)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want the removed pod's and the new pod's", len(rows))
	}
	var old, cur *EventRow
	for _, r := range rows {
		if r.Pod == nil {
			old = r
		} else {
			cur = r
		}
	}
	if old == nil || cur == nil {
		t.Fatalf("rows %+v: want one orphaned and one of the stored pod", rows)
	}
	if c, _, _ := old.Occurrences(); c != 4 {
		t.Fatalf("the removed pod's row counts %d, want 4", c)
	}
	if c, first, _ := cur.Occurrences(); c != 1 || !first.Equal(clk.Now()) {
		t.Fatalf("the new pod's event: count %d first %v, want 1 at %v", c, first, clk.Now())
	}
}

// The node events of one source are at most MaxSourceNodeEvents, its
// least recently occurred going first; the other events stay.
func TestSourceNodeEventsBounded(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(5000, 0))
	s, _ := New(nil, WithClock(clk))
	rec := EventRecorder{Store: s}
	node := func(src, msg string) events.Event {
		return events.Event{Namespace: "default", Node: "n1", Source: src, Type: events.Warning, Reason: "ManifestRefused", Message: msg}
	}
	rec.Record(events.Event{Namespace: "default", Pod: "web", Reason: "Started"})
	rec.Record(node("file", "a.yaml: bad"))
	rec.Record(node("http", "first"))
	for i := range MaxSourceNodeEvents + 50 {
		clk.Step(time.Millisecond)
		rec.Record(node("http", strconv.Itoa(i)))
		if i == MaxSourceNodeEvents+10 {
			rec.Record(node("http", "first")) // occurs again: recent
		}
	}
	perSource := map[string]int{}
	msgs := map[string]bool{}
	for _, e := range rec.List() {
		perSource[e.Source+"/"+e.Object()]++
		msgs[e.Message] = true
	}
	if perSource["http/n1"] != MaxSourceNodeEvents || perSource["file/n1"] != 1 || perSource["/web"] != 1 {
		t.Fatalf("kept %v", perSource)
	}
	if !msgs["first"] || msgs["0"] || !msgs[strconv.Itoa(MaxSourceNodeEvents+49)] {
		t.Fatal("the least recently occurred node events of the source go first")
	}
}
