package store

import (
	"fmt"

	"github.com/berth-dev/berth/model"
	memdb "github.com/hashicorp/go-memdb"
)

// Container returns the container with the runtime ID id, or nil.
func (s *Store) Container(ws memdb.WatchSet, id string) (*model.Container, error) {
	txn := s.db.Txn(false)
	ch, raw, err := txn.FirstWatch(TableContainers, IndexID, id)
	if err != nil {
		return nil, fmt.Errorf("container lookup: %w", err)
	}
	ws.Add(ch)
	if raw == nil {
		return nil, nil
	}
	return raw.(*model.Container), nil
}

// Containers returns every managed container.
func (s *Store) Containers(ws memdb.WatchSet) ([]*model.Container, error) {
	return containersIn(s.db.Txn(false), ws, IndexID)
}

// ContainersByPod returns the containers labelled with pod key podKey.
func (s *Store) ContainersByPod(ws memdb.WatchSet, podKey string) ([]*model.Container, error) {
	return containersIn(s.db.Txn(false), ws, IndexPod, podKey)
}

// HeldPods returns the UIDs of source's pods the node still holds, each
// once: those the store declares for source, and those of source's
// containers (by their labels) that still run, a removed pod's while they
// stop for its grace period. It reads one snapshot of both tables.
func (s *Store) HeldPods(source string) ([]string, error) {
	txn := s.db.Txn(false)
	pods, err := podsIn(txn, nil, IndexSource, source)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(pods))
	out := make([]string, 0, len(pods))
	add := func(uid string) {
		if !seen[uid] {
			seen[uid] = true
			out = append(out, uid)
		}
	}
	for _, p := range pods {
		if p.Spec != nil {
			add(string(p.Spec.UID))
		}
	}
	it, err := txn.Get(TableContainers, IndexSource, source)
	if err != nil {
		return nil, fmt.Errorf("container list: %w", err)
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if c := raw.(*model.Container); c.Running() && c.PodUID != "" {
			add(c.PodUID)
		}
	}
	return out, nil
}

func containersIn(txn *memdb.Txn, ws memdb.WatchSet, index string, args ...interface{}) ([]*model.Container, error) {
	it, err := txn.Get(TableContainers, index, args...)
	if err != nil {
		return nil, fmt.Errorf("container list: %w", err)
	}
	ws.Add(it.WatchCh())
	var out []*model.Container
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out = append(out, raw.(*model.Container))
	}
	return out, nil
}

// Seq returns the engine event sequence: how many engine events the store
// has applied (ApplyEvent). Read it just before an engine call, inspect or
// list whose answer will be written with ApplyContainer: an event for the
// same container applied after that refuses the answer.
func (s *Store) Seq() uint64 { return s.seq.Load() }

// UpsertContainer writes c, an answer observed as of sequence c.Seq, unless
// a newer observation of c.ID is held (see ApplyContainer). It reports
// whether c was written. c must not be modified after.
func (s *Store) UpsertContainer(c *model.Container) (bool, error) {
	return s.ApplyContainer(c.ID, c.Seq, func(*model.Container) (*model.Container, bool) { return c, true })
}

// DeleteContainer forgets container id, gone as of sequence since, unless a
// newer observation of it is held. Forgetting a missing container is no
// error; the deletion is remembered (a tombstone) so an older answer cannot
// bring it back.
func (s *Store) DeleteContainer(id string, since uint64) error {
	_, err := s.ApplyContainer(id, since, func(*model.Container) (*model.Container, bool) { return nil, true })
	return err
}

// ApplyEvent applies the next event of the engine's stream for container
// id. Events are never refused: the stream is the engine's own order. fn
// gets the held row (nil when none; never to be modified) and returns the
// row after the event, or nil when the container is gone, and whether the
// event changes anything; a change takes the next sequence, so every answer
// read before it is refused from then on.
//
// Misuse: only the engine's event stream, in the order received, may call
// it; a call's or an inspect's answer written here would win over events.
func (s *Store) ApplyEvent(id string, fn func(old *model.Container) (next *model.Container, write bool)) (bool, error) {
	return applyContainer(s, id, 0, true, fn)
}

// ApplyContainer is the ordered write of an answer (a call, an inspect, a
// list) about container id, observed as of since (Seq read just before the
// request). fn gets the held row of id (nil when none; never to be
// modified) and returns the row to store, or nil to delete it, and whether
// to write at all. The write is refused, and fn not called, when the store
// holds an observation of id newer than since: an event applied after since
// or an answer observed after it, on a row or on a deletion. It reports
// whether it wrote. No clock takes part: berth's and the engine's may both
// step.
//
// Misuse: since must be read before the request was sent; a later Seq lets
// stale answers win over events.
func (s *Store) ApplyContainer(id string, since uint64, fn func(old *model.Container) (next *model.Container, write bool)) (bool, error) {
	return applyContainer(s, id, since, false, fn)
}

func applyContainer(s *Store, id string, since uint64, event bool, fn func(old *model.Container) (*model.Container, bool)) (bool, error) {
	txn := newWrite(s)
	defer txn.Abort()
	raw, err := txn.First(TableContainers, IndexID, id)
	if err != nil {
		return false, fmt.Errorf("container lookup: %w", err)
	}
	var old *model.Container
	if raw != nil {
		old = raw.(*model.Container)
		if !event && old.Seq > since {
			return false, nil
		}
	}
	tomb, err := txn.First(TableTombstones, IndexID, id)
	if err != nil {
		return false, fmt.Errorf("tombstone lookup: %w", err)
	}
	if !event && tomb != nil && tomb.(*model.Tombstone).Seq > since {
		return false, nil
	}
	c, write := fn(old)
	if !write {
		return false, nil
	}
	if event {
		// Writers are serialised by the txn, so sequences follow the stream.
		since = s.seq.Add(1)
	}
	if c == nil {
		if err := txn.Insert(TableTombstones, &model.Tombstone{ID: id, Seq: since}); err != nil {
			return false, fmt.Errorf("tombstone insert: %w", err)
		}
		if old == nil {
			return true, txn.commit()
		}
		if err := txn.drop(TableContainers, old); err != nil {
			return false, fmt.Errorf("container delete: %w", err)
		}
		if err := txn.settleTerminating(old.PodKey); err != nil {
			return false, err
		}
		txn.notify(old.PodKey)
		return true, txn.commit()
	}
	if c.ID != id {
		return false, fmt.Errorf("container %s written as %s", id, c.ID)
	}
	cp := *c
	cp.Seq = since
	if old != nil {
		cp.Version = old.Version
	}
	if err := txn.insert(TableContainers, &cp, old == nil); err != nil {
		return false, fmt.Errorf("container insert: %w", err)
	}
	if old != nil && old.PodKey != c.PodKey {
		txn.notify(old.PodKey)
		if err := txn.settleTerminating(old.PodKey); err != nil {
			return false, err
		}
	}
	if err := txn.settleTerminating(c.PodKey); err != nil {
		return false, err
	}
	txn.notify(c.PodKey)
	return true, txn.commit()
}

// PruneTombstones forgets deletions observed before sequence before: pass
// the Seq read before a complete list of the engine that is itself no
// longer the latest, so answers still in flight from before it stay
// refused.
func (s *Store) PruneTombstones(before uint64) error {
	txn := s.db.Txn(true)
	defer txn.Abort()
	it, err := txn.Get(TableTombstones, IndexID)
	if err != nil {
		return fmt.Errorf("tombstone list: %w", err)
	}
	var old []*model.Tombstone
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if t := raw.(*model.Tombstone); t.Seq < before {
			old = append(old, t)
		}
	}
	for _, t := range old {
		if err := txn.Delete(TableTombstones, t); err != nil {
			return fmt.Errorf("tombstone delete: %w", err)
		}
	}
	txn.Commit()
	return nil
}
