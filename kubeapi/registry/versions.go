package registry

import (
	"context"
	"errors"

	memdb "github.com/hashicorp/go-memdb"
)

// ErrGone answers a watch resuming at a resourceVersion whose changes are
// no longer all known: the client relists (410 Gone).
var ErrGone = errors.New("resource version too old")

// Versions is where a kind's objects and resourceVersions come from: the
// store's indexes (storeVersions) for the kinds it holds, a tracker for the
// kinds berth derives outside it.
type Versions interface {
	// List returns every object, ordered by key, and the revision the list
	// is at; ws (may be nil) gets the channels that fire on a change.
	List(ctx context.Context, ws memdb.WatchSet) ([]*Entry, uint64, error)
	// Get returns the object at key, or nil.
	Get(ctx context.Context, key string) (*Entry, error)
	// Since returns the changes after rv, oldest first, and the revision
	// they bring the reader to; ws as for List. ErrGone: relist.
	Since(ctx context.Context, ws memdb.WatchSet, rv uint64) ([]Change, uint64, error)
}

// trackerVersions serves a kind outside the store through its tracker:
// each read snapshots the kind and diffs it against the last.
type trackerVersions struct {
	kind *Kind
	tr   *tracker
}

func (t trackerVersions) List(ctx context.Context, ws memdb.WatchSet) ([]*Entry, uint64, error) {
	return t.tr.sync(func() ([]item, error) { return t.kind.snapshot(ctx, ws) })
}

func (t trackerVersions) Get(ctx context.Context, key string) (*Entry, error) {
	entries, _, err := t.List(ctx, nil)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Key == key {
			return e, nil
		}
	}
	return nil, nil
}

func (t trackerVersions) Since(ctx context.Context, ws memdb.WatchSet, rv uint64) ([]Change, uint64, error) {
	_, rev, err := t.List(ctx, ws)
	if err != nil {
		return nil, 0, err
	}
	changes, ok := t.tr.since(rv)
	if !ok {
		return nil, 0, ErrGone
	}
	return changes, max(rev, rv), nil
}
