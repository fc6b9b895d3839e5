package kubeapi

import (
	"context"
	"errors"
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
	// hides, when set, reports whether a removal is not one for the API:
	// it stays served at the same index by another row (a pod removed
	// while its containers run stays as terminating).
	hides func(d *store.Deletion, writes map[string]any) bool
}

// storeVersions serves a storeKind: every object's resourceVersion is the
// store index that last wrote its row, and a watch reads the rows written
// after its version. Renderings are cached by row, so a change costs one
// rendering, whoever reads it.
type storeVersions struct {
	st   *store.Store
	kind storeKind

	mu    sync.Mutex
	cache map[any]*entry // by row pointer; rows are immutable
	gen   map[any]bool   // rows seen since the last sweep
}

func newStoreVersions(st *store.Store, k storeKind) *storeVersions {
	return &storeVersions{st: st, kind: k, cache: map[any]*entry{}, gen: map[any]bool{}}
}

// entry returns row rendered at its ModifyIndex, from the cache.
func (v *storeVersions) entry(row any) *entry {
	v.mu.Lock()
	defer v.mu.Unlock()
	if e, ok := v.cache[row]; ok {
		v.gen[row] = true
		return e
	}
	it := v.kind.render(row)
	e := stamped(it, rowIndex(row))
	v.cache[row] = e
	v.gen[row] = true
	return e
}

// sweep forgets the renderings of rows not read since the last sweep,
// once the cache holds twice the rows a list returned.
func (v *storeVersions) sweep(listed int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.cache) <= 2*listed+64 {
		return
	}
	for row := range v.cache {
		if !v.gen[row] {
			delete(v.cache, row)
		}
	}
	v.gen = map[any]bool{}
}

func stamped(it item, rv uint64) *entry {
	e := &entry{item: it, rv: rv}
	e.obj.SetResourceVersion(strconv.FormatUint(rv, 10))
	return e
}

func (v *storeVersions) list(_ context.Context, ws memdb.WatchSet) ([]*entry, uint64, error) {
	snap := v.st.Snapshot()
	if ws != nil {
		snap.Watch(ws, v.kind.tables...)
	}
	rows, err := v.kind.rows(snap, nil)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*entry, len(rows))
	for i, r := range rows {
		out[i] = v.entry(r)
	}
	v.sweep(len(rows))
	return out, snap.Index(), nil
}

func (v *storeVersions) get(_ context.Context, key string) (*entry, error) {
	row, err := v.kind.row(v.st.Snapshot(), key)
	if err != nil || row == nil {
		return nil, err
	}
	return v.entry(row), nil
}

func (v *storeVersions) since(_ context.Context, ws memdb.WatchSet, rv uint64) ([]change, uint64, error) {
	snap := v.st.Snapshot()
	if ws != nil {
		snap.Watch(ws, v.kind.tables...)
	}
	cs, err := snap.Changes(rv, v.kind.tables...)
	if errors.Is(err, store.ErrCompacted) {
		return nil, 0, errGone
	}
	if err != nil {
		return nil, 0, err
	}
	writes := map[string]any{}
	for _, c := range cs {
		if c.Deleted == nil {
			writes[writeKey(c.Table, c.Key, c.Index)] = c.Row
		}
	}
	out := make([]change, 0, len(cs))
	for _, c := range cs {
		if c.Deleted != nil {
			if v.kind.hides != nil && v.kind.hides(c.Deleted, writes) {
				continue
			}
			out = append(out, change{typ: WatchDeleted, rv: c.Index, cur: stamped(v.kind.gone(c.Deleted), c.Index)})
			continue
		}
		typ := WatchModified
		if rowCreated(c.Row) > rv {
			typ = WatchAdded
		}
		out = append(out, change{typ: typ, rv: c.Index, cur: v.entry(c.Row)})
	}
	return out, snap.Index(), nil
}

// writeKey is the key of writes (storeKind.hides) for a write of key in
// table at index.
func writeKey(table, key string, index uint64) string {
	return table + "\x00" + key + "\x00" + strconv.FormatUint(index, 10)
}

func rowIndex(row any) uint64 {
	switch r := row.(type) {
	case *model.Pod:
		return r.ModifyIndex
	case *model.Object:
		return r.ModifyIndex
	case *store.Terminating:
		return r.ModifyIndex
	case *store.EventRow:
		return r.ModifyIndex
	}
	return 0
}

func rowCreated(row any) uint64 {
	switch r := row.(type) {
	case *model.Pod:
		return r.CreateIndex
	case *model.Object:
		return r.CreateIndex
	case *store.Terminating:
		return r.Pod.CreateIndex // the same pod, now terminating
	case *store.EventRow:
		return r.CreateIndex
	}
	return 0
}
