package registry

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func cm(name, value string) item {
	return item{Key: "default/" + name, Obj: &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Data: map[string]string{"k": value}}}
}

func snap(items ...item) func() ([]item, error) { return func() ([]item, error) { return items, nil } }

func TestTrackerVersionsAndHistory(t *testing.T) {
	rev := &revision{}
	rev.n.Store(1000)
	tr := newTracker(rev)
	_, r1, _ := tr.sync(snap(cm("a", "1"), cm("b", "1")))
	entries, r2, _ := tr.sync(snap(cm("a", "1"), cm("b", "2")))
	if r2 != r1+1 || entries[0].RV != 1001 || entries[1].RV != r2 {
		t.Fatalf("versions: r1 %d r2 %d a %d b %d", r1, r2, entries[0].RV, entries[1].RV)
	}
	_, r3, _ := tr.sync(snap(cm("b", "2")))
	changes, ok := tr.since(r1)
	if !ok || len(changes) != 2 || changes[0].Type != WatchModified || changes[1].Type != WatchDeleted || changes[1].RV != r3 ||
		changes[1].Cur.Obj.GetResourceVersion() != "1004" {
		t.Fatalf("since r1: %v %+v", ok, changes)
	}
	if _, ok := tr.since(999); ok {
		t.Fatal("a version before the history is not Gone")
	}
	if _, ok := tr.since(r3 + 1); ok {
		t.Fatal("a version after the newest (another berth's) is not Gone")
	}
	// Past historyLen changes, the oldest are forgotten.
	for i := range historyLen {
		v := "x"
		if i%2 == 0 {
			v = "y"
		}
		_, _, _ = tr.sync(snap(cm("b", v)))
	}
	if _, ok := tr.since(r3); ok {
		t.Fatal("a version older than the kept history is not Gone")
	}
	if changes, ok := tr.since(rev.n.Load() - 1); !ok || len(changes) != 1 {
		t.Fatalf("the last change: %v %d", ok, len(changes))
	}
}

// Another source's object taking a key is the old one's deletion and the
// new one's creation, never a modification of one into the other.
func TestTrackerAnotherObjectAtAKey(t *testing.T) {
	rev := &revision{}
	tr := newTracker(rev)
	mine, theirs := cm("x", "same"), cm("x", "same")
	mine.Source, theirs.Source = "push", "file"
	_, r1, _ := tr.sync(snap(mine))
	entries, _, _ := tr.sync(snap(theirs))
	changes, _ := tr.since(r1)
	if len(changes) != 2 || changes[0].Type != WatchDeleted || changes[0].Cur.Source != "push" ||
		changes[1].Type != WatchAdded || changes[1].Cur.Source != "file" || entries[0].Source != "file" {
		t.Fatalf("changes %+v, entries %+v", changes, entries)
	}
	if got := changes[0].Cur.Obj.GetResourceVersion(); got != "2" {
		t.Fatalf("DELETED at version %s, want 2", got)
	}
}
