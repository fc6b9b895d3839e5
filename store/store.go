package store

import (
	"fmt"
	"time"

	"github.com/berth-dev/berth/model"
	memdb "github.com/hashicorp/go-memdb"
)

// Notifier receives the key of every pod whose desired or actual state
// changed, after the change is committed. It must not block.
type Notifier func(podKey string)

// Store is berth's state database. It is safe for concurrent use.
type Store struct {
	db     *memdb.MemDB
	notify Notifier
}

// New returns an empty store that reports changes to notify (may be nil).
func New(notify Notifier) (*Store, error) {
	db, err := memdb.NewMemDB(schema())
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if notify == nil {
		notify = func(string) {}
	}
	return &Store{db: db, notify: notify}, nil
}

func (s *Store) deferNotify(txn *memdb.Txn, key string) {
	if key == "" {
		return
	}
	txn.Defer(func() { s.notify(key) })
}

// Pod returns the desired pod with key, or nil.
func (s *Store) Pod(ws memdb.WatchSet, key string) (*model.Pod, error) {
	txn := s.db.Txn(false)
	ch, raw, err := txn.FirstWatch(TablePods, IndexID, key)
	if err != nil {
		return nil, fmt.Errorf("pod lookup: %w", err)
	}
	ws.Add(ch)
	if raw == nil {
		return nil, nil
	}
	return raw.(*model.Pod), nil
}

// Pods returns every desired pod, ordered by key.
func (s *Store) Pods(ws memdb.WatchSet) ([]*model.Pod, error) {
	return s.podsBy(ws, IndexID)
}

// PodsBySource returns the desired pods owned by source.
func (s *Store) PodsBySource(ws memdb.WatchSet, source string) ([]*model.Pod, error) {
	return s.podsBy(ws, IndexSource, source)
}

func (s *Store) podsBy(ws memdb.WatchSet, index string, args ...interface{}) ([]*model.Pod, error) {
	txn := s.db.Txn(false)
	it, err := txn.Get(TablePods, index, args...)
	if err != nil {
		return nil, fmt.Errorf("pod list: %w", err)
	}
	ws.Add(it.WatchCh())
	var out []*model.Pod
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out = append(out, raw.(*model.Pod))
	}
	return out, nil
}

// UpsertPod inserts or replaces a desired pod. p must not be modified after.
func (s *Store) UpsertPod(p *model.Pod) error {
	txn := s.db.Txn(true)
	defer txn.Abort()
	if err := txn.Insert(TablePods, p); err != nil {
		return fmt.Errorf("pod insert: %w", err)
	}
	s.deferNotify(txn, p.Key)
	txn.Commit()
	return nil
}

// UpdatePod applies mutate to a copy of the stored pod and writes it back when
// mutate returns true. It reports false when the pod does not exist.
func (s *Store) UpdatePod(key string, mutate func(p *model.Pod) bool) (bool, error) {
	txn := s.db.Txn(true)
	defer txn.Abort()
	raw, err := txn.First(TablePods, IndexID, key)
	if err != nil {
		return false, fmt.Errorf("pod lookup: %w", err)
	}
	if raw == nil {
		return false, nil
	}
	cp := *raw.(*model.Pod)
	if !mutate(&cp) {
		return true, nil
	}
	if err := txn.Insert(TablePods, &cp); err != nil {
		return false, fmt.Errorf("pod insert: %w", err)
	}
	txn.Commit()
	return true, nil
}

// DeletePod removes a desired pod; removing a missing pod is not an error.
func (s *Store) DeletePod(key string) error {
	txn := s.db.Txn(true)
	defer txn.Abort()
	if _, err := txn.DeleteAll(TablePods, IndexID, key); err != nil {
		return fmt.Errorf("pod delete: %w", err)
	}
	s.deferNotify(txn, key)
	txn.Commit()
	return nil
}

// ReplaceSourcePods makes pods the complete set of desired pods owned by
// source: pods of that source not in the set are deleted. Pods whose pointer
// is unchanged are not rewritten and not notified.
func (s *Store) ReplaceSourcePods(source string, pods []*model.Pod) error {
	txn := s.db.Txn(true)
	defer txn.Abort()
	want := make(map[string]*model.Pod, len(pods))
	for _, p := range pods {
		if p.Source != source {
			return fmt.Errorf("pod %s: source %q written as %q", p.Key, p.Source, source)
		}
		want[p.Key] = p
	}
	it, err := txn.Get(TablePods, IndexSource, source)
	if err != nil {
		return fmt.Errorf("pod list: %w", err)
	}
	var stale []*model.Pod
	have := map[string]*model.Pod{}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		p := raw.(*model.Pod)
		have[p.Key] = p
		if _, ok := want[p.Key]; !ok {
			stale = append(stale, p)
		}
	}
	for _, p := range stale {
		if err := txn.Delete(TablePods, p); err != nil {
			return fmt.Errorf("pod delete: %w", err)
		}
		s.deferNotify(txn, p.Key)
	}
	for key, p := range want {
		cur := have[key]
		if cur == p || (cur != nil && sameDesired(cur, p)) {
			continue // unchanged; cur may carry a newer status than p
		}
		if cur != nil && cur.Spec.UID == p.Spec.UID {
			// Status is the controller's: keep the latest written.
			p = p.WithObserved(cur)
		}
		if err := txn.Insert(TablePods, p); err != nil {
			return fmt.Errorf("pod insert: %w", err)
		}
		s.deferNotify(txn, key)
	}
	txn.Commit()
	return nil
}

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
	return s.containersBy(ws, IndexID)
}

// ContainersByPod returns the containers labelled with pod key podKey.
func (s *Store) ContainersByPod(ws memdb.WatchSet, podKey string) ([]*model.Container, error) {
	return s.containersBy(ws, IndexPod, podKey)
}

func (s *Store) containersBy(ws memdb.WatchSet, index string, args ...interface{}) ([]*model.Container, error) {
	txn := s.db.Txn(false)
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

// UpsertContainer writes c, observed at c.ObservedAt, unless the store holds
// a newer observation of c.ID (see ApplyContainer). It reports whether c was
// written. c must not be modified after.
func (s *Store) UpsertContainer(c *model.Container) (bool, error) {
	return s.ApplyContainer(c.ID, c.ObservedAt, func(*model.Container) (*model.Container, bool) { return c, true })
}

// DeleteContainer forgets container id, gone as observed at at, unless the
// store holds a newer observation of it. Forgetting a missing container is
// no error; the deletion is remembered (a tombstone) so an older inspect
// cannot bring it back.
func (s *Store) DeleteContainer(id string, at time.Time) error {
	_, err := s.ApplyContainer(id, at, func(*model.Container) (*model.Container, bool) { return nil, true })
	return err
}

// ApplyContainer is the one ordered write of actual state. fn gets the held
// row of id (nil when none; never to be modified) and returns the row to
// store, or nil to delete it, and whether to write at all; ApplyContainer
// stamps the result with at. The write is refused, and fn not called, when
// the store holds an observation of id newer than at: a row whose ObservedAt
// is after at, or a deletion observed after at. It reports whether it wrote.
//
// Misuse: at must be when the engine state fn describes was true (an event's
// engine time, or the time just before the inspect, list or call that told
// it), on the engine's clock; a later time lets stale state win.
func (s *Store) ApplyContainer(id string, at time.Time, fn func(old *model.Container) (next *model.Container, write bool)) (bool, error) {
	txn := s.db.Txn(true)
	defer txn.Abort()
	raw, err := txn.First(TableContainers, IndexID, id)
	if err != nil {
		return false, fmt.Errorf("container lookup: %w", err)
	}
	var old *model.Container
	if raw != nil {
		old = raw.(*model.Container)
		if at.Before(old.ObservedAt) {
			return false, nil
		}
	}
	tomb, err := txn.First(TableTombstones, IndexID, id)
	if err != nil {
		return false, fmt.Errorf("tombstone lookup: %w", err)
	}
	if tomb != nil && at.Before(tomb.(*model.Tombstone).At) {
		return false, nil
	}
	c, write := fn(old)
	if !write {
		return false, nil
	}
	if c == nil {
		if err := txn.Insert(TableTombstones, &model.Tombstone{ID: id, At: at}); err != nil {
			return false, fmt.Errorf("tombstone insert: %w", err)
		}
		if old == nil {
			txn.Commit()
			return true, nil
		}
		if err := txn.Delete(TableContainers, old); err != nil {
			return false, fmt.Errorf("container delete: %w", err)
		}
		s.deferNotify(txn, old.PodKey)
		txn.Commit()
		return true, nil
	}
	if c.ID != id {
		return false, fmt.Errorf("container %s written as %s", id, c.ID)
	}
	if !c.ObservedAt.Equal(at) {
		cp := *c
		cp.ObservedAt = at
		c = &cp
	}
	if old != nil && old.PodKey != c.PodKey {
		s.deferNotify(txn, old.PodKey)
	}
	if err := txn.Insert(TableContainers, c); err != nil {
		return false, fmt.Errorf("container insert: %w", err)
	}
	s.deferNotify(txn, c.PodKey)
	txn.Commit()
	return true, nil
}

// PruneTombstones forgets deletions observed before at: call it with the
// time a complete list of the engine was taken, which supersedes them.
func (s *Store) PruneTombstones(at time.Time) error {
	txn := s.db.Txn(true)
	defer txn.Abort()
	it, err := txn.Get(TableTombstones, IndexID)
	if err != nil {
		return fmt.Errorf("tombstone list: %w", err)
	}
	var old []*model.Tombstone
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if t := raw.(*model.Tombstone); t.At.Before(at) {
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

// Tombstones returns how many deletions are remembered.
func (s *Store) Tombstones() int {
	txn := s.db.Txn(false)
	it, err := txn.Get(TableTombstones, IndexID)
	if err != nil {
		return 0
	}
	n := 0
	for raw := it.Next(); raw != nil; raw = it.Next() {
		n++
	}
	return n
}

// Source returns the state of the named source, or nil.
func (s *Store) Source(ws memdb.WatchSet, name string) (*model.Source, error) {
	txn := s.db.Txn(false)
	ch, raw, err := txn.FirstWatch(TableSources, IndexID, name)
	if err != nil {
		return nil, fmt.Errorf("source lookup: %w", err)
	}
	ws.Add(ch)
	if raw == nil {
		return nil, nil
	}
	return raw.(*model.Source), nil
}

// Sources returns every registered source.
func (s *Store) Sources(ws memdb.WatchSet) ([]*model.Source, error) {
	txn := s.db.Txn(false)
	it, err := txn.Get(TableSources, IndexID)
	if err != nil {
		return nil, fmt.Errorf("source list: %w", err)
	}
	ws.Add(it.WatchCh())
	var out []*model.Source
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out = append(out, raw.(*model.Source))
	}
	return out, nil
}

// UpsertSource writes the state of a source. When a source becomes synced,
// every pod key with containers is notified, since orphans of that source may
// now be collected.
func (s *Store) UpsertSource(src *model.Source) error {
	txn := s.db.Txn(true)
	defer txn.Abort()
	old, err := txn.First(TableSources, IndexID, src.Name)
	if err != nil {
		return fmt.Errorf("source lookup: %w", err)
	}
	if err := txn.Insert(TableSources, src); err != nil {
		return fmt.Errorf("source insert: %w", err)
	}
	if src.Synced && (old == nil || !old.(*model.Source).Synced) {
		it, err := txn.Get(TableContainers, IndexID)
		if err != nil {
			return fmt.Errorf("container list: %w", err)
		}
		seen := map[string]bool{}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			k := raw.(*model.Container).PodKey
			if !seen[k] {
				seen[k] = true
				s.deferNotify(txn, k)
			}
		}
	}
	txn.Commit()
	return nil
}

// sameDesired reports whether a and b declare the same desired pod (the
// same spec object, origin and rejection), whatever their status.
func sameDesired(a, b *model.Pod) bool {
	return a.Spec == b.Spec && a.Origin == b.Origin && a.Error == b.Error && a.Source == b.Source
}
