package kubeapi

import (
	"context"
	"errors"

	memdb "github.com/hashicorp/go-memdb"
)

// errGone answers a watch resuming at a resourceVersion whose changes are
// no longer all known: the client relists (410 Gone).
var errGone = errors.New("resource version too old")

// versions is where a kind's objects and resourceVersions come from: the
// store's indexes (storeVersions) for the kinds it holds, a tracker for the
// kinds berth derives outside it.
type versions interface {
	// list returns every object, ordered by key, and the revision the list
	// is at; ws (may be nil) gets the channels that fire on a change.
	list(ctx context.Context, ws memdb.WatchSet) ([]*entry, uint64, error)
	// get returns the object at key, or nil.
	get(ctx context.Context, key string) (*entry, error)
	// since returns the changes after rv, oldest first, and the revision
	// they bring the reader to; ws as for list. errGone: relist.
	since(ctx context.Context, ws memdb.WatchSet, rv uint64) ([]change, uint64, error)
}

// trackerVersions serves a kind outside the store through its tracker:
// each read snapshots the kind and diffs it against the last.
type trackerVersions struct{ res *resource }

func (t trackerVersions) list(ctx context.Context, ws memdb.WatchSet) ([]*entry, uint64, error) {
	res := t.res
	return res.tr.sync(func() ([]item, error) { return res.snapshot(ctx, ws) })
}

func (t trackerVersions) get(ctx context.Context, key string) (*entry, error) {
	entries, _, err := t.list(ctx, nil)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.key == key {
			return e, nil
		}
	}
	return nil, nil
}

func (t trackerVersions) since(ctx context.Context, ws memdb.WatchSet, rv uint64) ([]change, uint64, error) {
	_, rev, err := t.list(ctx, ws)
	if err != nil {
		return nil, 0, err
	}
	changes, ok := t.res.tr.since(rv)
	if !ok {
		return nil, 0, errGone
	}
	return changes, max(rev, rv), nil
}
