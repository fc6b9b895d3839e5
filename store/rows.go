package store

import (
	"fmt"
	"time"

	"github.com/berth-dev/berth/model"
)

// Terminating is a pod removed from the store while a container of its
// UID still runs: the API serves it with deletionTimestamp At until they
// have stopped, when the row goes. Never to be modified.
type Terminating struct {
	model.Version
	Key string
	Pod *model.Pod
	At  time.Time
}

// putPod writes p over cur (the pod stored at p.Key, or nil) as a copy
// stamped at w's index. Another object taking the key (a new UID, or
// another source's) is a new object: cur's Deletion is kept. A pod written
// at a key ends that key's terminating row.
func (w *writeTxn) putPod(cur, p *model.Pod) error {
	cp := *p
	created := cur == nil || cur.Source != p.Source || podUID(cur) != podUID(p)
	if cur != nil {
		cp.Version = cur.Version
		if err := w.keepPast(TablePods, cur.Key, cur, !created); err != nil {
			return err
		}
	}
	if err := w.insert(TablePods, &cp, created); err != nil {
		return fmt.Errorf("pod insert: %w", err)
	}
	if cur != nil && created {
		if err := w.orphanEvents(cur); err != nil {
			return err
		}
	}
	w.countPod(cur, &cp)
	raw, err := w.First(TableTerminating, IndexID, p.Key)
	if err != nil {
		return fmt.Errorf("terminating lookup: %w", err)
	}
	if raw != nil {
		if err := w.remove(TableTerminating, p.Key, raw); err != nil {
			return fmt.Errorf("terminating delete: %w", err)
		}
	}
	return nil
}

// dropPod removes cur; while a container of its UID runs, the pod stays
// served as terminating (a Terminating row) until it stops.
func (w *writeTxn) dropPod(cur *model.Pod) error {
	if err := w.remove(TablePods, cur.Key, cur); err != nil {
		return fmt.Errorf("pod delete: %w", err)
	}
	if err := w.orphanEvents(cur); err != nil {
		return err
	}
	w.countPod(cur, nil)
	running, err := w.runs(cur.Key, podUID(cur))
	if err != nil || !running {
		return err
	}
	t := &Terminating{Key: cur.Key, Pod: cur, At: w.s.clock.Now()}
	if err := w.insert(TableTerminating, t, true); err != nil {
		return fmt.Errorf("terminating insert: %w", err)
	}
	return nil
}

// settleTerminating removes key's terminating row once no container of its
// pod's UID runs; called after every container write of key.
func (w *writeTxn) settleTerminating(key string) error {
	if key == "" {
		return nil
	}
	raw, err := w.First(TableTerminating, IndexID, key)
	if err != nil || raw == nil {
		return err
	}
	t := raw.(*Terminating)
	running, err := w.runs(key, podUID(t.Pod))
	if err != nil || running {
		return err
	}
	return w.remove(TableTerminating, key, t)
}

// runs reports whether a container of pod key with uid runs.
func (w *writeTxn) runs(key, uid string) (bool, error) {
	it, err := w.Get(TableContainers, IndexPod, key)
	if err != nil {
		return false, fmt.Errorf("container list: %w", err)
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if c := raw.(*model.Container); c.Running() && c.PodUID == uid {
			return true, nil
		}
	}
	return false, nil
}

// keepPast keeps row, which w's write removes from table (replaced true:
// overwrites with a new version of the same object), as a Deletion at w's
// index.
func (w *writeTxn) keepPast(table, key string, row any, replaced bool) error {
	d := &Deletion{ID: fmt.Sprintf("%s/%s/%d", table, key, w.index), Table: table, Key: key, Index: w.index, At: w.s.clock.Now(),
		Last: row, Replaced: replaced}
	if err := w.Insert(TableDeletions, d); err != nil {
		return fmt.Errorf("deletion insert: %w", err)
	}
	w.touched[TableDeletions] = true
	w.deleted[table]++
	return nil
}

// putSource writes src as a copy stamped at w's index, notifying as
// notifyOnSync does. Its Since is the store clock's now when its State
// changed (or it is new), else the stored one's.
func (w *writeTxn) putSource(src *model.Source) error {
	old, err := w.First(TableSources, IndexID, src.Name)
	if err != nil {
		return fmt.Errorf("source lookup: %w", err)
	}
	cp := *src
	cp.Since = w.s.clock.Now()
	if old, ok := old.(*model.Source); ok {
		cp.Version = old.Version
		if old.State() == cp.State() {
			cp.Since = old.Since
		}
	}
	if err := w.insert(TableSources, &cp, old == nil); err != nil {
		return fmt.Errorf("source insert: %w", err)
	}
	return w.notifyOnSync(old, &cp)
}

// putObject writes o over cur (or nil) as a copy stamped at w's index; a
// key taken by another source's object keeps cur's Deletion.
func (w *writeTxn) putObject(table string, cur, o *model.Object) error {
	cp := *o
	created := cur == nil || cur.Source != o.Source || objectUID(cur) != objectUID(o)
	if cur != nil {
		cp.Version = cur.Version
		if err := w.keepPast(table, cur.Key, cur, !created); err != nil {
			return err
		}
		if cur.Source != o.Source {
			if err := w.claimLeft(cur); err != nil {
				return err
			}
		}
	}
	if err := w.insert(table, &cp, created); err != nil {
		return fmt.Errorf("object insert: %w", err)
	}
	return nil
}

func podUID(p *model.Pod) string {
	if p == nil || p.Spec == nil {
		return ""
	}
	return string(p.Spec.UID)
}

func objectUID(o *model.Object) string {
	switch {
	case o.ConfigMap != nil:
		return string(o.ConfigMap.UID)
	case o.Secret != nil:
		return string(o.Secret.UID)
	case o.PVC != nil:
		return string(o.PVC.UID)
	}
	return ""
}

// orphanEvents rewrites the events recorded for p, which leaves the store,
// as recorded for no stored pod: only the requests that see every source
// see them from now on.
func (w *writeTxn) orphanEvents(p *model.Pod) error {
	it, err := w.Get(TableEvents, IndexID+"_prefix", p.Key+".")
	if err != nil {
		return fmt.Errorf("event list: %w", err)
	}
	var mine []*EventRow
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if e := raw.(*EventRow); e.Pod != nil && e.Pod.Key == p.Key && podUID(e.Pod) == podUID(p) && e.Pod.Source == p.Source {
			mine = append(mine, e)
		}
	}
	for _, e := range mine {
		cp := *e
		cp.Pod = nil
		if err := w.insert(TableEvents, &cp, false); err != nil {
			return fmt.Errorf("event insert: %w", err)
		}
		if err := w.keepPast(TableEvents, e.Key, e, true); err != nil {
			return err
		}
	}
	return nil
}
