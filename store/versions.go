package store

import (
	"fmt"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/resourcehelper"
)

// indexRow is the latest index written to one table (tableAll for the
// whole store), as Nomad's state store keeps it: a read of it is the
// version a snapshot is at, and its watch channel fires on every write to
// the table.
type indexRow struct {
	Table string
	Index uint64
}

// Deletion is a row a write transaction removed, kept so that watches
// resuming after an older index see it go. Last is the row as it was
// (never to be modified); At is when the store removed it. A Replaced one
// is the row's former version, overwritten by a write of the same object:
// kept so that a reader resuming from an index knows the object as it was
// then (what it last saw), not a removal.
type Deletion struct {
	ID       string // table/key/index: unique
	Table    string
	Key      string
	Index    uint64
	At       time.Time
	Last     any
	Replaced bool
}

// maxDeletions bounds the deletions (and replaced versions) kept per
// table; past it the oldest half goes and a watch resuming before the
// newest of them must relist (410 Gone).
const maxDeletions = 4096

// writeTxn is one write transaction with the index it stamps on every row
// it writes. Writes go through insert and remove so that every row carries
// the index and every table's index row follows.
//
// Misuse: a row given to insert is stamped in place; pass a copy the
// caller will not reuse, never a row read from the store.
type writeTxn struct {
	*memdb.Txn
	s       *Store
	index   uint64
	touched map[string]bool
	deleted map[string]int // deletions this transaction keeps, by table
	// requests is what this transaction's pod writes changed of the sum
	// of the pods' requests (requestsSet: it changed).
	requests    resourcehelper.Requests
	requestsSet bool
}

// newWrite opens the store's write transaction at the next index.
func newWrite(s *Store) *writeTxn {
	txn := s.db.Txn(true)
	return &writeTxn{Txn: txn, s: s, index: latestIndex(txn, tableAll) + 1, touched: map[string]bool{}, deleted: map[string]int{}}
}

func latestIndex(txn *memdb.Txn, table string) uint64 {
	raw, err := txn.First(TableIndexes, IndexID, table)
	if err != nil || raw == nil {
		return 0
	}
	return raw.(*indexRow).Index
}

// insert writes row into table stamped at this transaction's index;
// created marks a new object (its CreateIndex becomes the index).
func (w *writeTxn) insert(table string, row model.Versioned, created bool) error {
	row.Set(w.index, created)
	if err := w.Insert(table, row); err != nil {
		return err
	}
	w.touched[table] = true
	return nil
}

// remove deletes row, known in table under key, and keeps a Deletion of it
// at this transaction's index.
func (w *writeTxn) remove(table, key string, row any) error {
	if err := w.Delete(table, row); err != nil {
		return err
	}
	w.touched[table] = true
	return w.keepPast(table, key, row, false)
}

// drop deletes row from table without keeping a Deletion: for actual
// state, which no watch of the API serves.
func (w *writeTxn) drop(table string, row any) error {
	if err := w.Delete(table, row); err != nil {
		return err
	}
	w.touched[table] = true
	return nil
}

// commit writes the index rows of every table written, prunes old
// deletions, and commits. A transaction that wrote nothing takes no index.
func (w *writeTxn) commit() error {
	if len(w.touched) > 0 {
		if err := w.commitRequests(); err != nil {
			return err
		}
		if w.touched[TableDeletions] {
			if err := w.pruneDeletions(); err != nil {
				return err
			}
		}
		for t := range w.touched {
			if err := w.Insert(TableIndexes, &indexRow{Table: t, Index: w.index}); err != nil {
				return fmt.Errorf("index insert: %w", err)
			}
		}
		if err := w.Insert(TableIndexes, &indexRow{Table: tableAll, Index: w.index}); err != nil {
			return fmt.Errorf("index insert: %w", err)
		}
	}
	w.Commit()
	return nil
}

// pruneDeletions drops, for each table with more than maxDeletions kept,
// its oldest half, raising that table's compaction floor to the newest
// dropped.
func (w *writeTxn) pruneDeletions() error {
	for table, n := range w.deleted {
		n += int(latestIndex(w.Txn, tableDeletionCount+table))
		if n > maxDeletions {
			floor := latestIndex(w.Txn, tableCompacted+table)
			it, err := w.LowerBound(TableDeletions, IndexTable, table, uint64(0), "")
			if err != nil {
				return fmt.Errorf("deletion list: %w", err)
			}
			var drop []*Deletion
			for raw := it.Next(); raw != nil && len(drop) < n-maxDeletions/2; raw = it.Next() {
				d := raw.(*Deletion)
				if d.Table != table {
					break
				}
				drop = append(drop, d)
			}
			for _, d := range drop {
				if err := w.Delete(TableDeletions, d); err != nil {
					return fmt.Errorf("deletion prune: %w", err)
				}
				floor = max(floor, d.Index)
			}
			n -= len(drop)
			if err := w.Insert(TableIndexes, &indexRow{Table: tableCompacted + table, Index: floor}); err != nil {
				return err
			}
		}
		if err := w.Insert(TableIndexes, &indexRow{Table: tableDeletionCount + table, Index: uint64(n)}); err != nil {
			return err
		}
	}
	return nil
}

// Index rows of the deletions: the count kept and the compaction floor
// (the newest index whose deletions are no longer all kept), per table;
// tableCompacted alone is the floor of every table, the store's first
// index.
const (
	tableDeletionCount = "!deletions/"
	tableCompacted     = "!compacted/"
)

// compacted is the compaction floor of table in txn.
func compacted(txn *memdb.Txn, table string) uint64 {
	return max(latestIndex(txn, tableCompacted), latestIndex(txn, tableCompacted+table))
}

// Index returns the index the store is at: that of its last write.
func (s *Store) Index() uint64 { return latestIndex(s.db.Txn(false), tableAll) }

// Bump takes the next index without writing a row, for a version a reader
// derives outside the store (a polled kind) on the store's one counter.
func (s *Store) Bump() uint64 {
	w := newWrite(s)
	defer w.Abort()
	w.touched[tableBumped] = true
	_ = w.commit()
	return w.index
}

const (
	tableBumped = "!bumped"
	tableAll    = "!all"
)
