package store

import (
	"errors"
	"testing"

	memdb "github.com/hashicorp/go-memdb"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/model"
)

func uidPod(source, name, uid string) *model.Pod {
	return &model.Pod{Key: "default/" + name, Source: source, Spec: &v1.Pod{ObjectMeta: metaUID(name, uid)}}
}

// Every write takes the next index and stamps it on each row it writes;
// Changes after an index returns exactly the rows written or removed
// since, in order, and a key taken by another object shows the old one's
// removal before the new one.
func TestChangesFollowIndexes(t *testing.T) {
	s, _ := New(nil)
	start := s.Index()
	if err := s.ReplaceSourcePods("file", []*model.Pod{uidPod("file", "a", "1"), uidPod("file", "b", "2")}); err != nil {
		t.Fatal(err)
	}
	afterAB := s.Index()
	if afterAB != start+1 {
		t.Fatalf("one write took indexes %d..%d", start, afterAB)
	}
	a, _ := s.Pod(nil, "default/a")
	if a.CreateIndex != afterAB || a.ModifyIndex != afterAB {
		t.Fatalf("pod a version %+v, want %d", a.Version, afterAB)
	}
	if _, err := s.UpdatePod("default/a", func(p *model.Pod) bool { p.Status.Phase = v1.PodRunning; return true }); err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceSourcePods("file", []*model.Pod{uidPod("file", "a", "1"), uidPod("file", "b", "3")}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePod("default/a"); err != nil {
		t.Fatal(err)
	}
	cs, err := s.Snapshot().Changes(afterAB, TablePods)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		typ := "write"
		if c.Deleted != nil {
			typ = "removal of " + string(c.Deleted.Last.(*model.Pod).Spec.UID)
		}
		got = append(got, c.Key+" "+typ)
	}
	want := []string{"default/b removal of 2", "default/b write", "default/a removal of 1"}
	if len(got) != len(want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("changes %q, want %q", got, want)
		}
	}
	b, _ := s.Pod(nil, "default/b")
	if b.CreateIndex != b.ModifyIndex || b.CreateIndex <= afterAB {
		t.Fatalf("pod b of a new UID has version %+v", b.Version)
	}
	if cs, _ := s.Snapshot().Changes(s.Index(), TablePods); len(cs) != 0 {
		t.Fatalf("changes after the last index: %v", cs)
	}
	if _, err := s.Snapshot().Changes(start-1, TablePods); !errors.Is(err, ErrCompacted) {
		t.Fatalf("changes from before this run: %v, want ErrCompacted", err)
	}
	if _, err := s.Snapshot().Changes(s.Index()+1, TablePods); !errors.Is(err, ErrCompacted) {
		t.Fatalf("changes from a future index: %v, want ErrCompacted", err)
	}
}

// A pod removed while a container of its UID runs stays as a Terminating
// row until the container stops; the row then goes, as a removal.
func TestTerminatingUntilContainersStop(t *testing.T) {
	s, _ := New(nil)
	p := uidPod("file", "a", "1")
	_ = s.UpsertPod(p)
	_, _ = s.UpsertContainer(&model.Container{ID: "c1", PodKey: p.Key, PodUID: "1", State: model.StateRunning, Seq: s.Seq()})
	if err := s.DeletePod(p.Key); err != nil {
		t.Fatal(err)
	}
	ts, _ := s.Snapshot().Terminating(nil)
	if len(ts) != 1 || ts[0].Pod.Key != p.Key {
		t.Fatalf("terminating %v", ts)
	}
	at := s.Index()
	ws := memdb.NewWatchSet()
	s.Snapshot().Watch(ws, TableTerminating)
	if err := s.DeleteContainer("c1", s.Seq()); err != nil {
		t.Fatal(err)
	}
	if !fired(ws) {
		t.Fatal("the terminating table's watch did not fire")
	}
	if ts, _ := s.Snapshot().Terminating(nil); len(ts) != 0 {
		t.Fatalf("still terminating after the container went: %v", ts)
	}
	cs, _ := s.Snapshot().Changes(at, TableTerminating)
	if len(cs) != 1 || cs[0].Deleted == nil {
		t.Fatalf("changes %v, want the terminating row's removal", cs)
	}
}

// fired reports whether a channel of ws is closed, without waiting.
func fired(ws memdb.WatchSet) bool {
	for ch := range ws {
		select {
		case <-ch:
			return true
		default:
		}
	}
	return false
}

func metaUID(name, uid string) (m metav1.ObjectMeta) {
	m.Name, m.Namespace, m.UID = name, "default", types.UID(uid)
	return m
}

// Deletions are kept up to a bound per table; a reader from before the
// oldest kept must relist, one after it still sees every removal, and
// another table's history is untouched.
func TestDeletionsPrunedPerTable(t *testing.T) {
	s, _ := New(nil)
	start := s.Index()
	_ = s.ReplaceSourcePods("file", nil)
	for i := 0; i <= maxDeletions; i++ {
		p := uidPod("file", "a", "1")
		if err := s.UpsertPod(p); err != nil {
			t.Fatal(err)
		}
		if err := s.DeletePod(p.Key); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Snapshot().Changes(start, TablePods); !errors.Is(err, ErrCompacted) {
		t.Fatalf("changes from before the kept deletions: %v, want ErrCompacted", err)
	}
	recent := s.Index() - 10
	cs, err := s.Snapshot().Changes(recent, TablePods)
	if err != nil || len(cs) != 5 {
		t.Fatalf("changes of the last 10 writes (5 writes and 5 removals of one key, now gone): %d, %v", len(cs), err)
	}
	if _, err := s.Snapshot().Changes(start, TableConfigMaps); err != nil {
		t.Fatalf("another table's history: %v", err)
	}
}

// A change carries the object as it was at the index read after: the
// version the first write after it replaced or removed, or nothing for an
// object created since.
func TestChangesCarryTheObjectAsItWas(t *testing.T) {
	s, _ := New(nil)
	_ = s.UpsertPod(uidPod("file", "a", "1"))
	at0 := s.Index()
	for _, phase := range []v1.PodPhase{v1.PodRunning, v1.PodSucceeded} {
		if _, err := s.UpdatePod("default/a", func(p *model.Pod) bool { p.Status.Phase = phase; return true }); err != nil {
			t.Fatal(err)
		}
	}
	at2 := s.Index()
	_ = s.UpsertPod(uidPod("file", "b", "2"))
	_ = s.DeletePod("default/a")
	cs, err := s.Snapshot().Changes(at0, TablePods)
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]any{}
	for _, c := range cs {
		old[c.Key] = c.Old
	}
	if a, _ := old["default/a"].(*model.Pod); a == nil || a.ModifyIndex != at0 || a.Status.Phase != "" {
		t.Fatalf("a as it was at %d: %+v", at0, old["default/a"])
	}
	if old["default/b"] != nil {
		t.Fatalf("b, created since, was %+v", old["default/b"])
	}
	cs, _ = s.Snapshot().Changes(at2-1, TablePods)
	for _, c := range cs {
		if a, _ := c.Old.(*model.Pod); c.Key == "default/a" && (a == nil || a.Status.Phase != v1.PodRunning) {
			t.Fatalf("a as it was at %d: %+v", at2-1, c.Old)
		}
	}
}
