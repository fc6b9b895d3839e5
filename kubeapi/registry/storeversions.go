package registry

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

// storeKind is how a kind the store holds is read and rendered.
type storeKind struct {
	// tables are the store tables the kind is served from.
	tables []string
	// rows lists the kind's rows in snap, ordered by key.
	rows func(snap store.Snapshot, ws memdb.WatchSet) ([]any, error)
	// row returns the row at key in snap, or nil.
	row func(snap store.Snapshot, key string) (any, error)
	// render renders a row: key, object (its resourceVersion is set after)
	// and source.
	render func(row any) item
	// gone renders the last state of a removed row as its DELETED event
	// carries it, removed at d.At.
	gone func(d *store.Deletion) item
	// servedBy, when set, names the table whose row, when written at the
	// same key and index as removal d, serves the object on: d is then no
	// removal for the API (a pod removed while its containers run stays as
	// terminating). "": none.
	servedBy func(d *store.Deletion) string
	// joined, when set, is the second of tables, holding parts of the
	// objects (a claim's volume): part returns an object's part as it was
	// at an index (nil: none), join joins an object with its part (nil
	// for none) into the row rows and row return, object returns a row's
	// object, and owner the key of the object whose part a change of the
	// joined table may be. A write of an object's own part is a change of
	// the object; a joined kind renders its DELETED with the part it had
	// as it went (gone is unused).
	joined string
	owner  func(c store.Change) string
	part   func(snap store.Snapshot, obj any, index uint64) (any, error)
	join   func(obj, part any) any
	object func(row any) any
}

// storeVersions serves a storeKind: every object's resourceVersion is the
// store index that last wrote its row, and a watch reads the rows written
// after its version. Renderings are cached by key, each for the row it
// was rendered from, so a change costs one rendering whoever reads it, and
// the cache holds one rendering per object.
type storeVersions struct {
	st   *store.Store
	kind storeKind

	mu    sync.Mutex
	cache map[string]*Entry // by rowKey; entry.ident is the row (rows are immutable)
}

func newStoreVersions(st *store.Store, k storeKind) *storeVersions {
	return &storeVersions{st: st, kind: k, cache: map[string]*Entry{}}
}

// entry returns row rendered at its ModifyIndex, from the cache.
func (v *storeVersions) entry(row any) *Entry {
	k := rowKey(row)
	v.mu.Lock()
	defer v.mu.Unlock()
	if e, ok := v.cache[k]; ok && e.ident == row {
		return e
	}
	e := stamped(v.kind.render(row), rowIndex(row))
	e.ident = row
	v.cache[k] = e
	return e
}

// old renders row, an object as it was before a change, at its own
// version, when called (nil: none); not cached.
func (v *storeVersions) old(row any) func() *Entry {
	if row == nil {
		return nil
	}
	return func() *Entry { return stamped(v.kind.render(row), rowIndex(row)) }
}

// forget drops the cached rendering of a removed row.
func (v *storeVersions) forget(row any) {
	k := rowKey(row)
	v.mu.Lock()
	defer v.mu.Unlock()
	if e, ok := v.cache[k]; ok && e.ident == row {
		delete(v.cache, k)
	}
}

// keep drops the cached renderings of keys not in rows (a full list).
func (v *storeVersions) keep(rows []any) {
	live := make(map[string]bool, len(rows))
	for _, r := range rows {
		live[rowKey(r)] = true
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for k := range v.cache {
		if !live[k] {
			delete(v.cache, k)
		}
	}
}

func stamped(it item, rv uint64) *Entry {
	e := &Entry{item: it, RV: rv}
	e.Obj.SetResourceVersion(strconv.FormatUint(rv, 10))
	return e
}

func (v *storeVersions) List(_ context.Context, ws memdb.WatchSet) ([]*Entry, uint64, error) {
	snap := v.st.Snapshot()
	if ws != nil {
		snap.Watch(ws, v.kind.tables...)
	}
	rows, err := v.kind.rows(snap, nil)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*Entry, len(rows))
	for i, r := range rows {
		out[i] = v.entry(r)
	}
	v.keep(rows)
	return out, snap.Index(), nil
}

func (v *storeVersions) Get(_ context.Context, key string) (*Entry, error) {
	row, err := v.kind.row(v.st.Snapshot(), key)
	if err != nil || row == nil {
		return nil, err
	}
	return v.entry(row), nil
}

func (v *storeVersions) Since(_ context.Context, ws memdb.WatchSet, rv uint64) ([]Change, uint64, error) {
	snap := v.st.Snapshot()
	if ws != nil {
		snap.Watch(ws, v.kind.tables...)
	}
	cs, err := snap.Changes(rv, v.kind.tables...)
	if errors.Is(err, store.ErrCompacted) {
		return nil, 0, ErrGone
	}
	if err != nil {
		return nil, 0, err
	}
	if v.kind.joined != "" {
		out, err := v.joinedSince(snap, cs, rv)
		return out, snap.Index(), err
	}
	writes := map[string]bool{}
	for _, c := range cs {
		if c.Deleted == nil {
			writes[writeKey(c.Table, c.Key, c.Index)] = true
		}
	}
	// hidden are the old states of the removals another row serves on
	// (storeKind.servedBy), by that row's write, for its change.
	hidden := map[string]any{}
	out := make([]Change, 0, len(cs))
	for _, c := range cs {
		if c.Deleted != nil {
			v.forget(c.Deleted.Last)
			if v.kind.servedBy != nil {
				if k := writeKey(v.kind.servedBy(c.Deleted), c.Key, c.Index); writes[k] {
					hidden[k] = c.Old
					continue
				}
			}
			out = append(out, Change{Type: WatchDeleted, RV: c.Index, Cur: stamped(v.kind.gone(c.Deleted), c.Index), before: v.old(c.Old)})
			continue
		}
		old := c.Old
		if h, ok := hidden[writeKey(c.Table, c.Key, c.Index)]; ok && old == nil {
			old = h
		}
		typ := WatchModified
		if rowCreated(c.Row) > rv {
			typ = WatchAdded
		}
		out = append(out, Change{Type: typ, RV: c.Index, Cur: v.entry(c.Row), before: v.old(old)})
	}
	return out, snap.Index(), nil
}

// joinedSince is Since of a joined kind: a write of either part of an
// object is one change of the object as it now is, reported once, at the
// version of its newer part (a part removed while the object stays
// never happens: its row stays, empty); a write of a part that is not the
// object's (another source's) is none. Its prior state is the object as
// it was at the version read from, joined with its part as it was then.
func (v *storeVersions) joinedSince(snap store.Snapshot, cs []store.Change, rv uint64) ([]Change, error) {
	// olds are the objects at rv of the objects written since (nil: none
	// then, as the store's Change.Old); another object's key is unchanged.
	olds := map[string]any{}
	for _, c := range cs {
		if c.Table != v.kind.joined && c.Deleted == nil {
			olds[c.Key] = c.Old
		}
	}
	prior := func(obj any) (func() *Entry, error) {
		if obj == nil {
			return nil, nil
		}
		part, err := v.kind.part(snap, obj, rv)
		if err != nil {
			return nil, err
		}
		return v.old(v.kind.join(obj, part)), nil
	}
	done := map[string]bool{}
	out := make([]Change, 0, len(cs))
	for _, c := range cs {
		if c.Deleted != nil && c.Table != v.kind.joined {
			last := c.Deleted.Last
			v.forgetKey(rowKey(v.kind.join(last, nil)))
			part, err := v.kind.part(snap, last, c.Index) // as it went
			if err != nil {
				return nil, err
			}
			before, err := prior(c.Old)
			if err != nil {
				return nil, err
			}
			cur := stamped(v.kind.render(v.kind.join(last, part)), c.Index)
			out = append(out, Change{Type: WatchDeleted, RV: c.Index, Cur: cur, before: before})
			continue
		}
		key := c.Key
		if c.Table == v.kind.joined {
			key = v.kind.owner(c)
		}
		if done[key] {
			continue
		}
		cur, err := v.kind.row(snap, key)
		if err != nil {
			return nil, err
		}
		if cur == nil || rowIndex(cur) != c.Index {
			continue // gone since, reported at its newer part's write, or another's part
		}
		done[key] = true
		typ := WatchAdded
		var before func() *Entry
		if rowCreated(cur) <= rv {
			typ = WatchModified
			obj, changed := olds[key]
			if !changed {
				obj = v.kind.object(cur)
			}
			if before, err = prior(obj); err != nil {
				return nil, err
			}
		}
		out = append(out, Change{Type: typ, RV: c.Index, Cur: v.entry(cur), before: before})
	}
	return out, nil
}

// forgetKey drops the cached rendering at k (a rowKey), whatever its row.
func (v *storeVersions) forgetKey(k string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.cache, k)
}

// writeKey names the write of key in table at index.
func writeKey(table, key string, index uint64) string {
	return table + "\x00" + key + "\x00" + strconv.FormatUint(index, 10)
}

// rowKey is the cache key of a row: its type and key.
func rowKey(row any) string {
	switch r := row.(type) {
	case *model.Pod:
		return "p\x00" + r.Key
	case *model.Object:
		return "o\x00" + r.Key
	case *store.Terminating:
		return "t\x00" + r.Key
	case *store.EventRow:
		return "e\x00" + r.Key
	case claimRow:
		return "c\x00" + r.obj.Key
	}
	return fmt.Sprintf("%T", row)
}

// versioned is a row with a version: a stored row (model.Versioned) or
// one joined from two (claimRow).
type versioned interface{ Current() model.Version }

func rowIndex(row any) uint64 { return row.(versioned).Current().ModifyIndex }

func rowCreated(row any) uint64 {
	if t, ok := row.(*store.Terminating); ok {
		return t.Pod.CreateIndex // the same pod, now terminating
	}
	return row.(versioned).Current().CreateIndex
}
