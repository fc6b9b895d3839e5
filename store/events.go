package store

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/model"
)

// MaxEvents bounds the events the store keeps: past it the one that last
// occurred least recently (EventRow.LastIndex) goes, as a removal watches
// see.
const MaxEvents = 1000

// AggregateWindow is how long after an event's last occurrence an
// identical one (the same object, container, source, type, reason and
// message) counts as another occurrence of it rather than a new event:
// client-go's event correlator aggregates within ten minutes.
const AggregateWindow = 10 * time.Minute

// MaxSourceNodeEvents bounds the node events of one source (its refused
// manifests and failed reads): past it that source's least recently
// occurred node event goes, so that an origin refused in many ways
// never evicts the other events.
const MaxSourceNodeEvents = 100

// EventRow is one recorded event as the store keeps it. Key is
// namespace/name, the name being the object's (the pod's, or the node's)
// and the event's first time in hex nanoseconds (".n" after it when that
// is taken); Event is its first occurrence, Count how many times it
// occurred (0 reads as 1) and Last the latest (zero: Event.Time);
// LastIndex is the store index that recorded the latest, which no other
// rewrite moves (eviction goes by it). Pod is the stored pod the event was
// recorded for (the same UID and source) while it is stored, nil when
// there is none: a pod leaving the store (removed, or replaced by another
// UID or source) rewrites its events without it. Never to be modified.
type EventRow struct {
	model.Version
	Key       string
	Event     events.Event
	Count     int32
	Last      time.Time
	LastIndex uint64
	Pod       *model.Pod
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

// List returns the kept events, each once with its occurrences, in the
// order they first occurred (recorded).
func (r EventRecorder) List() []events.Occurred {
	rows, _ := r.Store.Snapshot().eventsBy(nil, IndexCreate)
	out := make([]events.Occurred, len(rows))
	for i, row := range rows {
		count, _, last := row.Occurrences()
		out[i] = events.Occurred{Event: row.Event, Count: count, LastTime: last}
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
	same, err := w.similarEvent(e, p)
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
		cp.LastIndex = w.index
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
	row := &EventRow{Key: key, Event: e, Count: 1, Last: e.Time, LastIndex: w.index, Pod: p}
	if err := w.insert(TableEvents, row, true); err != nil {
		return fmt.Errorf("event insert: %w", err)
	}
	n := latestIndex(w.Txn, tableEventCount) + 1
	if e.Node != "" {
		gone, err := w.capNodeEvents(e.Source)
		if err != nil {
			return err
		}
		n -= gone
	}
	for ; n > MaxEvents; n-- {
		oldest, err := w.First(TableEvents, IndexLast)
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
// AggregateWindow of e (and not after it by more), and is attached as e
// is (to p, the stored pod e is recorded for, of the same incarnation; or,
// p nil, to none); nil when none is. A row orphaned by its pod's removal
// is never the event of a pod stored since, though pod UIDs repeat (they
// are derived from the source and the name): a re-created pod starts its
// own counts.
func (w *writeTxn) similarEvent(e events.Event, p *model.Pod) (*EventRow, error) {
	it, err := w.Get(TableEvents, IndexSimilar, e)
	if err != nil {
		return nil, fmt.Errorf("event lookup: %w", err)
	}
	var best *EventRow
	var bestLast time.Time
	for raw := it.Next(); raw != nil; raw = it.Next() {
		r := raw.(*EventRow)
		if (r.Pod == nil) != (p == nil) || (p != nil && r.Pod.CreateIndex != p.CreateIndex) {
			continue
		}
		if _, _, last := r.Occurrences(); best == nil || last.After(bestLast) {
			best, bestLast = r, last
		}
	}
	if best == nil || e.Time.Sub(bestLast) > AggregateWindow || bestLast.Sub(e.Time) > AggregateWindow {
		return nil, nil
	}
	return best, nil
}

// capNodeEvents removes, least recently occurred first, the node events of
// source past MaxSourceNodeEvents, returning how many went.
func (w *writeTxn) capNodeEvents(source string) (uint64, error) {
	it, err := w.Get(TableEvents, IndexNodeSource+"_prefix", source)
	if err != nil {
		return 0, fmt.Errorf("event list: %w", err)
	}
	var rows []*EventRow
	for raw := it.Next(); raw != nil; raw = it.Next() {
		rows = append(rows, raw.(*EventRow))
	}
	var gone uint64
	for _, r := range rows[:max(0, len(rows)-MaxSourceNodeEvents)] {
		if err := w.remove(TableEvents, r.Key, r); err != nil {
			return gone, fmt.Errorf("event delete: %w", err)
		}
		gone++
	}
	return gone, nil
}

// nodeSourceIndexer indexes node events (Event.Node set) by source, then
// LastIndex, then key; its argument is a source's name, for a prefix
// lookup.
type nodeSourceIndexer struct{}

func (nodeSourceIndexer) FromObject(raw any) (bool, []byte, error) {
	r, ok := raw.(*EventRow)
	if !ok {
		return false, nil, fmt.Errorf("node source index: %T is not an event row", raw)
	}
	if r.Event.Node == "" {
		return false, nil, nil
	}
	b := append([]byte(r.Event.Source), 0)
	b = binary.BigEndian.AppendUint64(b, r.LastIndex)
	return true, append(append(b, r.Key...), 0), nil
}

func (nodeSourceIndexer) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("node source index: one source, got %d arguments", len(args))
	}
	src, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("node source index: %T is not a source name", args[0])
	}
	return append([]byte(src), 0), nil
}

func (x nodeSourceIndexer) PrefixFromArgs(args ...any) ([]byte, error) { return x.FromArgs(args...) }

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
