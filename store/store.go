package store

import (
	"fmt"
	"sync/atomic"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/model"
)

// Notifier receives the key of every pod whose desired or actual state
// changed, after the change is committed. It must not block.
type Notifier func(podKey string)

// Store is berth's state database. It is safe for concurrent use.
type Store struct {
	db     *memdb.MemDB
	notify Notifier
	clock  clock.Clock
	respec Respec
	seq    atomic.Uint64 // engine events applied; see Seq
}

// Option configures a Store.
type Option func(*Store)

// WithClock sets the clock of deletion times and of the first index (the
// real one by default).
func WithClock(c clock.Clock) Option { return func(s *Store) { s.clock = c } }

// Respec returns next, a new spec of stored's UID, carrying stored's
// observed state, as of now; the controller's status follows. It returns a
// new row and mutates neither.
type Respec func(stored, next *model.Pod, now time.Time) *model.Pod

// WithRespec sets how a pod's observed state carries to a new spec of the
// same UID: (*model.Pod).WithObserved by default; an agent's also marks, in
// the write of the spec, what the edit replaces.
func WithRespec(f Respec) Option { return func(s *Store) { s.respec = f } }

// New returns an empty store that reports changes to notify (may be nil).
// Its indexes start at the clock's time in microseconds, so that every
// index of this run is newer than any of an earlier run (which wrote less
// than once a microsecond), and a watch resuming at one of those relists.
func New(notify Notifier, opts ...Option) (*Store, error) {
	db, err := memdb.NewMemDB(schema())
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if notify == nil {
		notify = func(string) {}
	}
	s := &Store{db: db, notify: notify, clock: clock.RealClock{},
		respec: func(stored, next *model.Pod, _ time.Time) *model.Pod { return next.WithObserved(stored) }}
	for _, o := range opts {
		o(s)
	}
	base := uint64(s.clock.Now().UnixMicro())
	txn := db.Txn(true)
	for _, t := range []string{tableAll, tableCompacted} {
		if err := txn.Insert(TableIndexes, &indexRow{Table: t, Index: base}); err != nil {
			txn.Abort()
			return nil, fmt.Errorf("store: %w", err)
		}
	}
	txn.Commit()
	return s, nil
}

// notify notifies key once the transaction commits.
func (txn *writeTxn) notify(key string) {
	if key == "" {
		return
	}
	txn.Defer(func() { txn.s.notify(key) })
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
	return podsIn(s.db.Txn(false), ws, IndexID)
}

func podsIn(txn *memdb.Txn, ws memdb.WatchSet, index string, args ...interface{}) ([]*model.Pod, error) {
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
	w := newWrite(s)
	defer w.Abort()
	raw, err := w.First(TablePods, IndexID, p.Key)
	if err != nil {
		return fmt.Errorf("pod lookup: %w", err)
	}
	cur, _ := raw.(*model.Pod)
	if err := w.putPod(cur, p); err != nil {
		return err
	}
	w.notify(p.Key)
	return w.commit()
}

// UpdatePod applies mutate to a copy of the stored pod and writes it back when
// mutate returns true. It reports false when the pod does not exist.
func (s *Store) UpdatePod(key string, mutate func(p *model.Pod) bool) (bool, error) {
	w := newWrite(s)
	defer w.Abort()
	raw, err := w.First(TablePods, IndexID, key)
	if err != nil {
		return false, fmt.Errorf("pod lookup: %w", err)
	}
	if raw == nil {
		return false, nil
	}
	cur := raw.(*model.Pod)
	cp := *cur
	if !mutate(&cp) {
		return true, nil
	}
	if err := w.putPod(cur, &cp); err != nil {
		return false, err
	}
	return true, w.commit()
}

// DeletePod removes a desired pod; removing a missing pod is not an error.
func (s *Store) DeletePod(key string) error {
	w := newWrite(s)
	defer w.Abort()
	raw, err := w.First(TablePods, IndexID, key)
	if err != nil {
		return fmt.Errorf("pod lookup: %w", err)
	}
	if cur, _ := raw.(*model.Pod); cur != nil {
		if err := w.dropPod(cur); err != nil {
			return err
		}
	}
	w.notify(key)
	return w.commit()
}

// ReplaceSourcePods makes pods the complete set of desired pods owned by
// source: pods of that source not in the set are deleted. Pods whose pointer
// is unchanged are not rewritten and not notified.
func (s *Store) ReplaceSourcePods(source string, pods []*model.Pod) error {
	w := newWrite(s)
	defer w.Abort()
	if err := w.replaceSourcePods(source, pods); err != nil {
		return err
	}
	return w.commit()
}

func (txn *writeTxn) replaceSourcePods(source string, pods []*model.Pod) error {
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
		if err := txn.dropPod(p); err != nil {
			return err
		}
		txn.notify(p.Key)
	}
	for key, p := range want {
		cur := have[key]
		if cur == p || (cur != nil && sameDesired(cur, p)) {
			continue // unchanged; cur may carry a newer status than p
		}
		if cur != nil && cur.Spec.UID == p.Spec.UID {
			// Status is the controller's: keep the latest written.
			p = txn.s.respec(cur, p, txn.s.clock.Now())
		}
		if err := txn.putPod(cur, p); err != nil {
			return err
		}
		txn.notify(key)
	}
	return nil
}

// changeSourcePods writes the new and changed pods of source as
// replaceSourcePods does, and deletes its pods at removed, leaving its
// other pods alone: the cost is that of the change.
func (txn *writeTxn) changeSourcePods(source string, pods []*model.Pod, removed []string) error {
	for _, k := range removed {
		raw, err := txn.First(TablePods, IndexID, k)
		if err != nil {
			return fmt.Errorf("pod lookup: %w", err)
		}
		if cur, _ := raw.(*model.Pod); cur != nil && cur.Source == source {
			if err := txn.dropPod(cur); err != nil {
				return err
			}
			txn.notify(k)
		}
	}
	for _, p := range pods {
		if p.Source != source {
			return fmt.Errorf("pod %s: source %q written as %q", p.Key, p.Source, source)
		}
		raw, err := txn.First(TablePods, IndexID, p.Key)
		if err != nil {
			return fmt.Errorf("pod lookup: %w", err)
		}
		cur, _ := raw.(*model.Pod)
		if cur != nil && cur.Source != source {
			return fmt.Errorf("pod %s: source %q's, written as %q's", p.Key, cur.Source, source)
		}
		if cur == p || (cur != nil && sameDesired(cur, p)) {
			continue
		}
		if cur != nil && cur.Spec.UID == p.Spec.UID {
			p = txn.s.respec(cur, p, txn.s.clock.Now())
		}
		if err := txn.putPod(cur, p); err != nil {
			return err
		}
		txn.notify(p.Key)
	}
	return nil
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

// UpsertSource writes the state of a source (see notifyOnSync).
func (s *Store) UpsertSource(src *model.Source) error {
	w := newWrite(s)
	defer w.Abort()
	if err := w.putSource(src); err != nil {
		return err
	}
	return w.commit()
}

// notifyOnSync notifies every pod key with containers when src is the
// first synced row of its source (old is the row it replaces, or nil):
// orphans of that source, and of sources no longer configured once all
// have synced, may be collected now, not at the next resync.
func (txn *writeTxn) notifyOnSync(old any, src *model.Source) error {
	if !src.Synced || (old != nil && old.(*model.Source).Synced) {
		return nil
	}
	it, err := txn.Get(TableContainers, IndexID)
	if err != nil {
		return fmt.Errorf("container list: %w", err)
	}
	seen := map[string]bool{}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		k := raw.(*model.Container).PodKey
		if !seen[k] {
			seen[k] = true
			txn.notify(k)
		}
	}
	return nil
}

// sameDesired reports whether a and b declare the same desired pod (an
// equal spec, the same origin and rejection), whatever their status: a
// write of an equal pod is no write, and takes no version.
func sameDesired(a, b *model.Pod) bool {
	return a.Origin == b.Origin && a.Error == b.Error && a.Source == b.Source &&
		(a.Spec == b.Spec || equality.Semantic.DeepEqual(a.Spec, b.Spec))
}
