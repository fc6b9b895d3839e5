package store

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/model"
)

// MaxEvents bounds the events the store keeps: past it the oldest goes, as
// a removal watches see.
const MaxEvents = 1000

// EventRow is one recorded event as the store keeps it. Key is
// namespace/name, the name being the pod's and the event's time in hex
// nanoseconds (".n" after it when that is taken); Pod is the stored pod
// the event was recorded for (the same UID and source) while it is
// stored, nil when there is none: a pod leaving the store (removed, or
// replaced by another UID or source) rewrites its events without it.
// Never to be modified.
type EventRow struct {
	model.Version
	Key   string
	Event events.Event
	Pod   *model.Pod
}

// EventRecorder records events into the store (events.Recorder).
type EventRecorder struct{ Store *Store }

// Record implements events.Recorder: one short write transaction.
func (r EventRecorder) Record(e events.Event) { _ = recordEvent(r.Store, e) }

// List returns the kept events, oldest first.
func (r EventRecorder) List() []events.Event {
	rows, _ := r.Store.Snapshot().eventsBy(nil, IndexCreate)
	out := make([]events.Event, len(rows))
	for i, row := range rows {
		out[i] = row.Event
	}
	return out
}

func recordEvent(s *Store, e events.Event) error {
	w := newWrite(s)
	defer w.Abort()
	podKey := e.Namespace + "/" + e.Pod
	base := fmt.Sprintf("%s/%s.%x", e.Namespace, e.Pod, e.Time.UnixNano())
	key := base
	for n := 1; ; n++ {
		raw, err := w.First(TableEvents, IndexID, key)
		if err != nil {
			return fmt.Errorf("event lookup: %w", err)
		}
		if raw == nil {
			break
		}
		key = fmt.Sprintf("%s.%d", base, n)
	}
	row := &EventRow{Key: key, Event: e}
	pod, err := w.First(TablePods, IndexID, podKey)
	if err != nil {
		return fmt.Errorf("pod lookup: %w", err)
	}
	if p, _ := pod.(*model.Pod); p != nil && ofPod(e, p) {
		row.Pod = p
	}
	if err := w.insert(TableEvents, row, true); err != nil {
		return fmt.Errorf("event insert: %w", err)
	}
	n := latestIndex(w.Txn, tableEventCount) + 1
	for ; n > MaxEvents; n-- {
		oldest, err := w.First(TableEvents, IndexCreate)
		if err != nil || oldest == nil {
			return fmt.Errorf("event list: %v", err)
		}
		if err := w.remove(TableEvents, oldest.(*EventRow).Key, oldest); err != nil {
			return fmt.Errorf("event delete: %w", err)
		}
	}
	if err := w.Insert(TableIndexes, &indexRow{Table: tableEventCount, Index: n}); err != nil {
		return fmt.Errorf("index insert: %w", err)
	}
	return w.commit()
}

// tableEventCount is the index row counting the events kept.
const tableEventCount = "!events"

// ofPod reports whether e was recorded for p itself, not for an earlier
// pod of p's name: the same UID and source.
func ofPod(e events.Event, p *model.Pod) bool {
	return p.Spec != nil && e.PodUID == string(p.Spec.UID) && e.Source == p.Source
}

// Events returns the kept events, ordered by key (namespace, pod, time).
func (r Snapshot) Events(ws memdb.WatchSet) ([]*EventRow, error) { return r.eventsBy(ws, IndexID) }

// eventsBy returns the kept events in the order of index; ws (may be nil)
// gets the channel that fires on a change.
func (r Snapshot) eventsBy(ws memdb.WatchSet, index string) ([]*EventRow, error) {
	it, err := r.txn.Get(TableEvents, index)
	if err != nil {
		return nil, fmt.Errorf("event list: %w", err)
	}
	ws.Add(it.WatchCh())
	var out []*EventRow
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out = append(out, raw.(*EventRow))
	}
	return out, nil
}

// Event returns the event at key, or nil.
func (r Snapshot) Event(key string) (*EventRow, error) {
	raw, err := r.txn.First(TableEvents, IndexID, key)
	if err != nil {
		return nil, fmt.Errorf("event lookup: %w", err)
	}
	e, _ := raw.(*EventRow)
	return e, nil
}
