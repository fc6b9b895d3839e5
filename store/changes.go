package store

import (
	"errors"
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/berth-dev/berth/model"
)

// ErrCompacted answers Changes from an index the store can no longer
// account for: older than its kept deletions (or than this run), or newer
// than its last write. The reader must relist.
var ErrCompacted = errors.New("store: index compacted")

// Change is one row of a table written or removed after an index: Row is
// the row as it now is, or nil when Deleted; Deleted is the row's removal
// (or its replacement by another object at the key), whose Last is what
// was removed. Old is the object as it was at the index the changes are
// read after (what a reader at that index last saw), nil when it did not
// exist then.
type Change struct {
	Table   string
	Key     string
	Index   uint64
	Row     any
	Deleted *Deletion
	Old     any
}

// Snapshot reads the store as of one moment: every read of it sees the
// same state, at Index.
//
// Misuse: a Snapshot is a read transaction; keep it only as long as a
// request needs one consistent state, not across waits.
type Snapshot struct{ txn *memdb.Txn }

// Snapshot returns a consistent read of the store now.
func (s *Store) Snapshot() Snapshot { return Snapshot{s.db.Txn(false)} }

// Index is the index the snapshot is at.
func (r Snapshot) Index() uint64 { return latestIndex(r.txn, tableAll) }

// Pods returns every desired pod, ordered by key.
func (r Snapshot) Pods(ws memdb.WatchSet) ([]*model.Pod, error) { return podsIn(r.txn, ws, IndexID) }

// Objects returns every object of kind, ordered by key.
func (r Snapshot) Objects(ws memdb.WatchSet, kind string) ([]*model.Object, error) {
	return objectsIn(r.txn, ws, kind, IndexID)
}

// Pod returns the desired pod with key, or nil.
func (r Snapshot) Pod(key string) (*model.Pod, error) { return View(r).Pod(key) }

// Object returns the object of kind with key, or nil.
func (r Snapshot) Object(kind, key string) (*model.Object, error) {
	return objectIn(r.txn, nil, kind, key)
}

// TerminatingPod returns the terminating row at key, or nil.
func (r Snapshot) TerminatingPod(key string) (*Terminating, error) {
	raw, err := r.txn.First(TableTerminating, IndexID, key)
	if err != nil {
		return nil, fmt.Errorf("terminating lookup: %w", err)
	}
	t, _ := raw.(*Terminating)
	return t, nil
}

// Terminating returns the pods served as terminating, ordered by key.
func (r Snapshot) Terminating(ws memdb.WatchSet) ([]*Terminating, error) {
	it, err := r.txn.Get(TableTerminating, IndexID)
	if err != nil {
		return nil, fmt.Errorf("terminating list: %w", err)
	}
	ws.Add(it.WatchCh())
	var out []*Terminating
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out = append(out, raw.(*Terminating))
	}
	return out, nil
}

// Watch adds to ws the channels that fire on the next write to any of
// tables.
func (r Snapshot) Watch(ws memdb.WatchSet, tables ...string) {
	for _, t := range tables {
		ch, _, _ := r.txn.FirstWatch(TableIndexes, IndexID, t)
		ws.Add(ch)
	}
}

// Changes returns the changes to tables after index since, up to the
// snapshot's index, oldest first: every row written after since, once, as
// it now is, and every removal after since. At one index a removal comes
// before the write that replaced it. The work is that of the changes, not
// of the tables. ErrCompacted: the reader must relist.
func (r Snapshot) Changes(since uint64, tables ...string) ([]Change, error) {
	var out []Change
	for _, t := range tables {
		if since < compacted(r.txn, t) || since > r.Index() {
			return nil, ErrCompacted
		}
		it, err := r.txn.LowerBound(t, IndexModify, since+1, "")
		if err != nil {
			return nil, fmt.Errorf("%s changes: %w", t, err)
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			key, index := rowKey(raw)
			old, err := r.before(t, key, raw, since)
			if err != nil {
				return nil, err
			}
			out = append(out, Change{Table: t, Key: key, Index: index, Row: raw, Old: old})
		}
		dit, err := r.txn.LowerBound(TableDeletions, IndexTable, t, since+1, "")
		if err != nil {
			return nil, fmt.Errorf("%s deletions: %w", t, err)
		}
		for raw := dit.Next(); raw != nil; raw = dit.Next() {
			d := raw.(*Deletion)
			if d.Table != t {
				break
			}
			if d.Replaced {
				continue
			}
			old, err := r.before(t, d.Key, d.Last, since)
			if err != nil {
				return nil, err
			}
			out = append(out, Change{Table: t, Key: d.Key, Index: d.Index, Deleted: d, Old: old})
		}
	}
	sortChanges(out)
	return out, nil
}

// before returns obj, at key in table and written after since, as it was
// at since: nil when it was created after since, else its version that
// the first write after since replaced or removed (kept as a Deletion,
// the compaction floor being at or before since).
func (r Snapshot) before(table, key string, obj any, since uint64) (any, error) {
	if obj.(model.Versioned).Current().CreateIndex > since {
		return nil, nil
	}
	it, err := r.txn.LowerBound(TableDeletions, IndexKey, table, key, since+1)
	if err != nil {
		return nil, fmt.Errorf("%s history: %w", table, err)
	}
	if raw := it.Next(); raw != nil {
		if d := raw.(*Deletion); d.Table == table && d.Key == key {
			return d.Last, nil
		}
	}
	return nil, nil
}

// rowKey returns a versioned row's key and modify index.
func rowKey(raw any) (string, uint64) {
	index := raw.(model.Versioned).Current().ModifyIndex
	switch r := raw.(type) {
	case *model.Pod:
		return r.Key, index
	case *model.Object:
		return r.Key, index
	case *model.Source:
		return r.Name, index
	case *model.Container:
		return r.ID, index
	case *Terminating:
		return r.Key, index
	case *EventRow:
		return r.Key, index
	case *ClaimVolume:
		return r.ID, index
	}
	return "", index
}
