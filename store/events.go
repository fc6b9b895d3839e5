package store

import (
	"fmt"
	"strings"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/model"
)

// MaxEvents bounds the events the store keeps: past it the one written
// least recently (by its last occurrence) goes, as a removal watches see.
const MaxEvents = 1000

// AggregateWindow is how long after an event's last occurrence an
// identical one (the same object, container, source, type, reason and
// message) counts as another occurrence of it rather than a new event:
// client-go's event correlator aggregates within ten minutes.
const AggregateWindow = 10 * time.Minute

// EventRow is one recorded event as the store keeps it. Key is
// namespace/name, the name being the object's (the pod's, or the node's)
// and the event's first time in hex nanoseconds (".n" after it when that
// is taken); Event is its first occurrence, Count how many times it
// occurred (0 reads as 1) and Last the latest (zero: Event.Time). Pod is
// the stored pod the event was recorded for (the same UID and source)
// while it is stored, nil when there is none: a pod leaving the store
// (removed, or replaced by another UID or source) rewrites its events
// without it. Never to be modified.
type EventRow struct {
	model.Version
	Key   string
	Event events.Event
	Count int32
	Last  time.Time
	Pod   *model.Pod
}

// Occurrences returns how many times the event occurred, and its first and
// last time.
func (r *EventRow) Occurrences() (count int32, first, last time.Time) {
	count, first, last = r.Count, r.Event.Time, r.Last
	if count < 1 {
		count = 1
	}
	if last.IsZero() {
		last = first
	}
	return count, first, last
}

// EventRecorder records events into the store (events.Recorder).
type EventRecorder struct{ Store *Store }

// Record implements events.Recorder: one short write transaction. An
// event identical to one that last occurred within AggregateWindow is
// that event occurring again: its row is rewritten with the count raised
// and Last moved (a MODIFIED to watches), as client-go's correlator
// patches the event; an event without a time takes the store's clock's.
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
	if e.Time.IsZero() {
		e.Time = s.clock.Now()
	}
	pod, err := w.First(TablePods, IndexID, e.Namespace+"/"+e.Pod)
	if err != nil {
		return fmt.Errorf("pod lookup: %w", err)
	}
	p, _ := pod.(*model.Pod)
	if p != nil && (e.Node != "" || !ofPod(e, p)) {
		p = nil
	}
	same, err := w.similarEvent(e)
	if err != nil {
		return err
	}
	if same != nil {
		cp := *same
		cp.Count, _, cp.Last = same.Occurrences()
		cp.Count++
		if e.Time.After(cp.Last) {
			cp.Last = e.Time
		}
		cp.Pod = p
		if err := w.insert(TableEvents, &cp, false); err != nil {
			return fmt.Errorf("event insert: %w", err)
		}
		if err := w.keepPast(TableEvents, same.Key, same, true); err != nil {
			return err
		}
		return w.commit()
	}
	base := fmt.Sprintf("%s/%s.%x", e.Namespace, e.Object(), e.Time.UnixNano())
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
	row := &EventRow{Key: key, Event: e, Count: 1, Last: e.Time, Pod: p}
	if err := w.insert(TableEvents, row, true); err != nil {
		return fmt.Errorf("event insert: %w", err)
	}
	n := latestIndex(w.Txn, tableEventCount) + 1
	for ; n > MaxEvents; n-- {
		oldest, err := w.First(TableEvents, IndexModify)
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

// similarEvent returns the kept event e is another occurrence of: the
// identical one that last occurred latest, when that is within
// AggregateWindow of e (and not after it by more); nil when none is.
func (w *writeTxn) similarEvent(e events.Event) (*EventRow, error) {
	it, err := w.Get(TableEvents, IndexSimilar, e)
	if err != nil {
		return nil, fmt.Errorf("event lookup: %w", err)
	}
	var best *EventRow
	var bestLast time.Time
	for raw := it.Next(); raw != nil; raw = it.Next() {
		r := raw.(*EventRow)
		if _, _, last := r.Occurrences(); best == nil || last.After(bestLast) {
			best, bestLast = r, last
		}
	}
	if best == nil || e.Time.Sub(bestLast) > AggregateWindow || bestLast.Sub(e.Time) > AggregateWindow {
		return nil, nil
	}
	return best, nil
}

// similarKey is what makes two events the same event: everything but
// their time (client-go's event key: source, involved object, type,
// reason, message).
func similarKey(e events.Event) string {
	return strings.Join([]string{e.Namespace, e.Pod, e.PodUID, e.Node, e.Source, e.Container, e.Type, e.Reason, e.Message}, "\x00") + "\x00"
}

// similarIndexer indexes events by similarKey; its argument is an
// events.Event.
type similarIndexer struct{}

func (similarIndexer) FromObject(raw any) (bool, []byte, error) {
	r, ok := raw.(*EventRow)
	if !ok {
		return false, nil, fmt.Errorf("similar index: %T is not an event row", raw)
	}
	return true, []byte(similarKey(r.Event)), nil
}

func (similarIndexer) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("similar index: one event, got %d arguments", len(args))
	}
	e, ok := args[0].(events.Event)
	if !ok {
		return nil, fmt.Errorf("similar index: %T is not an event", args[0])
	}
	return []byte(similarKey(e)), nil
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
