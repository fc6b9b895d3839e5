package registry

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-dev/berth/store"
)

// object is what every served kind is: a typed object with metadata.
type Object interface {
	runtime.Object
	metav1.Object
}

// item is one object of a snapshot: ident, when set, is what it is
// rendered from (a store value, immutable), so an unchanged ident is an
// unchanged object, not rendered again; render renders it when obj is
// nil; source is the source that owns it, for the push scope ("" for
// objects every token may see).
type item struct {
	Key    string
	Obj    Object
	render func() Object
	ident  any
	Source string
}

// Entry is an object as served, with its resourceVersion (RV) set, and
// the source that owns it (Source, for the push scope; "" for objects
// every token may see).
type Entry struct {
	item
	RV  uint64
	raw []byte // JSON without resourceVersion, to compare renderings
}

// Change is one watch event: old is nil for ADDED and when unknown (the
// store keeps only the latest state); for DELETED, cur is the last state
// with the deletion's resourceVersion.
type Change struct {
	Type     string
	RV       uint64
	Old, Cur *Entry
	// before, when set, renders Old on demand (Prior): only a watch
	// resuming from a version needs it.
	before func() *Entry
}

// Prior is the object as the reader last had it at the version it reads
// after (Old), or nil when it did not exist then.
func (c Change) Prior() *Entry {
	if c.Old == nil && c.before != nil {
		return c.before()
	}
	return c.Old
}

// Key is the key of the changed object.
func (c Change) Key() string { return c.Cur.Key }

// historyLen bounds the changes a tracker keeps for watches that resume at
// a resourceVersion; older ones answer 410 Gone and the client relists.
const historyLen = 4096

// counter is the one counter of resourceVersions, shared by every kind as
// etcd's revision is: the store's index (storeCounter), so that a tracked
// kind's versions and the store's kinds' are one sequence.
type counter interface {
	next() uint64
	current() uint64
}

// revision is a counter of its own, for a tracker outside an API (tests).
type revision struct{ n atomic.Uint64 }

func (r *revision) next() uint64    { return r.n.Add(1) }
func (r *revision) current() uint64 { return r.n.Load() }

// storeCounter takes versions from the store's index.
type storeCounter struct{ st *store.Store }

func (c storeCounter) next() uint64    { return c.st.Bump() }
func (c storeCounter) current() uint64 { return c.st.Index() }

// tracker turns successive snapshots of one kind into resourceVersions and
// watch events: each object's version is the revision at which its
// rendering last changed. Safe for concurrent use; every list, get and
// watch of the kind syncs it, so a change is recorded once whoever sees it
// first.
type tracker struct {
	rev counter
	// gone, when set, marks the last state a DELETED event carries.
	gone func(Object)

	mu      sync.Mutex
	live    map[string]*Entry
	log     []Change
	logFrom uint64 // every change after this revision is in log
}

func newTracker(rev counter) *tracker {
	return &tracker{rev: rev, live: map[string]*Entry{}, logFrom: rev.current()}
}

// sync records the items snapshot returns, called under the tracker's
// lock, as the current state and returns it, ordered by key, with the
// revision it is at.
func (t *tracker) sync(snapshot func() ([]item, error)) ([]*Entry, uint64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	items, err := snapshot()
	if err != nil {
		return nil, 0, err
	}
	seen := make(map[string]bool, len(items))
	out := make([]*Entry, 0, len(items))
	for _, it := range items {
		seen[it.Key] = true
		old := t.live[it.Key]
		if old != nil && it.ident != nil && old.ident == it.ident {
			out = append(out, old)
			continue
		}
		if it.Obj == nil {
			it.Obj = it.render()
		}
		if old != nil && (old.Source != it.Source || old.Obj.GetUID() != it.Obj.GetUID()) {
			// Another object took the key (another source's, or a new
			// UID): the old one was deleted and this one created, as the
			// apiserver reports them; never one modified into the other,
			// which would hand the old object's watchers the new one.
			t.remove(old)
			old = nil
		}
		raw, err := json.Marshal(it.Obj)
		if err != nil {
			return nil, 0, err
		}
		if old != nil && bytes.Equal(old.raw, raw) {
			old.ident = it.ident
			out = append(out, old)
			continue
		}
		e := &Entry{item: it, raw: raw, RV: t.rev.next()}
		e.Obj = it.Obj.DeepCopyObject().(Object)
		e.Obj.SetResourceVersion(strconv.FormatUint(e.RV, 10))
		typ := WatchModified
		if old == nil {
			typ = WatchAdded
		}
		t.record(Change{Type: typ, RV: e.RV, Old: old, Cur: e})
		t.live[it.Key] = e
		out = append(out, e)
	}
	for k, old := range t.live {
		if !seen[k] {
			t.remove(old)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, t.rev.current(), nil
}

// remove records old's deletion at a new revision: its last state, marked
// by gone. Called under the lock.
func (t *tracker) remove(old *Entry) {
	gone := old.At(t.rev.next())
	if t.gone != nil {
		t.gone(gone.Obj)
	}
	t.record(Change{Type: WatchDeleted, RV: gone.RV, Old: old, Cur: gone})
	delete(t.live, old.Key)
}

// At returns a copy of e as of revision rv: the same state with rv as its
// resourceVersion.
func (e *Entry) At(rv uint64) *Entry {
	c := &Entry{item: e.item, raw: e.raw, RV: rv}
	c.Obj = e.Obj.DeepCopyObject().(Object)
	c.Obj.SetResourceVersion(strconv.FormatUint(rv, 10))
	return c
}

func (t *tracker) record(c Change) {
	t.log = append(t.log, c)
	if len(t.log) > historyLen {
		drop := len(t.log) - historyLen/2
		t.logFrom = t.log[drop-1].RV
		t.log = append([]Change(nil), t.log[drop:]...)
	}
}

// since returns the changes after revision rv, oldest first; ok is false
// when rv is older than the kept history or newer than any revision
// (another berth's): the watch must answer 410 Gone.
func (t *tracker) since(rv uint64) (changes []Change, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if rv < t.logFrom || rv > t.rev.current() {
		return nil, false
	}
	i := sort.Search(len(t.log), func(i int) bool { return t.log[i].RV > rv })
	return append([]Change(nil), t.log[i:]...), true
}

// ZeroEntry is an Entry of obj with nothing else set: for the field set of
// a kind's empty object.
func ZeroEntry(obj Object) *Entry { return &Entry{item: item{Obj: obj}} }
