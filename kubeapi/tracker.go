package kubeapi

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
type object interface {
	runtime.Object
	metav1.Object
}

// item is one object of a snapshot: ident, when set, is what it is
// rendered from (a store value, immutable), so an unchanged ident is an
// unchanged object, not rendered again; render renders it when obj is
// nil; source is the source that owns it, for the push scope ("" for
// objects every token may see).
type item struct {
	key    string
	obj    object
	render func() object
	ident  any
	source string
}

// entry is an object as the tracker last recorded it, with its
// resourceVersion set.
type entry struct {
	item
	rv  uint64
	raw []byte // JSON without resourceVersion, to compare renderings
}

// change is one watch event: old is nil for ADDED and when unknown (the
// store keeps only the latest state); for DELETED, cur is the last state
// with the deletion's resourceVersion.
type change struct {
	typ      string
	rv       uint64
	old, cur *entry
}

// key is the key of the changed object.
func (c change) key() string { return c.cur.key }

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
	gone func(object)

	mu      sync.Mutex
	cur     map[string]*entry
	log     []change
	logFrom uint64 // every change after this revision is in log
}

func newTracker(rev counter) *tracker {
	return &tracker{rev: rev, cur: map[string]*entry{}, logFrom: rev.current()}
}

// sync records the items snapshot returns, called under the tracker's
// lock, as the current state and returns it, ordered by key, with the
// revision it is at.
func (t *tracker) sync(snapshot func() ([]item, error)) ([]*entry, uint64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	items, err := snapshot()
	if err != nil {
		return nil, 0, err
	}
	seen := make(map[string]bool, len(items))
	out := make([]*entry, 0, len(items))
	for _, it := range items {
		seen[it.key] = true
		old := t.cur[it.key]
		if old != nil && it.ident != nil && old.ident == it.ident {
			out = append(out, old)
			continue
		}
		if it.obj == nil {
			it.obj = it.render()
		}
		if old != nil && (old.source != it.source || old.obj.GetUID() != it.obj.GetUID()) {
			// Another object took the key (another source's, or a new
			// UID): the old one was deleted and this one created, as the
			// apiserver reports them; never one modified into the other,
			// which would hand the old object's watchers the new one.
			t.remove(old)
			old = nil
		}
		raw, err := json.Marshal(it.obj)
		if err != nil {
			return nil, 0, err
		}
		if old != nil && bytes.Equal(old.raw, raw) {
			old.ident = it.ident
			out = append(out, old)
			continue
		}
		e := &entry{item: it, raw: raw, rv: t.rev.next()}
		e.obj = it.obj.DeepCopyObject().(object)
		e.obj.SetResourceVersion(strconv.FormatUint(e.rv, 10))
		typ := WatchModified
		if old == nil {
			typ = WatchAdded
		}
		t.record(change{typ: typ, rv: e.rv, old: old, cur: e})
		t.cur[it.key] = e
		out = append(out, e)
	}
	for k, old := range t.cur {
		if !seen[k] {
			t.remove(old)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out, t.rev.current(), nil
}

// remove records old's deletion at a new revision: its last state, marked
// by gone. Called under the lock.
func (t *tracker) remove(old *entry) {
	gone := old.at(t.rev.next())
	if t.gone != nil {
		t.gone(gone.obj)
	}
	t.record(change{typ: WatchDeleted, rv: gone.rv, old: old, cur: gone})
	delete(t.cur, old.key)
}

// at returns a copy of e as of revision rv: the same state with rv as its
// resourceVersion.
func (e *entry) at(rv uint64) *entry {
	c := &entry{item: e.item, raw: e.raw, rv: rv}
	c.obj = e.obj.DeepCopyObject().(object)
	c.obj.SetResourceVersion(strconv.FormatUint(rv, 10))
	return c
}

func (t *tracker) record(c change) {
	t.log = append(t.log, c)
	if len(t.log) > historyLen {
		drop := len(t.log) - historyLen/2
		t.logFrom = t.log[drop-1].rv
		t.log = append([]change(nil), t.log[drop:]...)
	}
}

// since returns the changes after revision rv, oldest first; ok is false
// when rv is older than the kept history or newer than any revision
// (another berth's): the watch must answer 410 Gone.
func (t *tracker) since(rv uint64) (changes []change, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if rv < t.logFrom || rv > t.rev.current() {
		return nil, false
	}
	i := sort.Search(len(t.log), func(i int) bool { return t.log[i].rv > rv })
	return append([]change(nil), t.log[i:]...), true
}
