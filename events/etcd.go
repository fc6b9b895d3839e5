package events

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/utils/clock"
)

// EventTTL is how long events live in etcd, as in the seed kubelet.
const EventTTL = 48 * time.Hour

// DefaultEventWindow is how long an EtcdSink gathers events for one
// transaction: a pod's Created and Started, or a burst of pods starting,
// cost one etcd revision.
const DefaultEventWindow = 100 * time.Millisecond

// maxTxnOps is etcd's default --max-txn-ops.
const maxTxnOps = 128

// EtcdSink writes events to /events/<ns>/<pod>/<unix-nanos> under one shared
// lease of EventTTL, renewed by granting a new lease when it is half spent.
// Record queues; Run writes the events queued within Window of the first
// (up to 128) in one transaction. A full queue drops events (and counts
// them); so does a failed write.
type EtcdSink struct {
	// Window is how long events are gathered for one write
	// (DefaultEventWindow when zero); Clock times it and the lease (nil:
	// the real clock). Set before Run.
	Window time.Duration
	Clock  clock.Clock

	client  *clientv3.Client
	queue   chan Event
	log     *slog.Logger
	mu      sync.Mutex
	dropped int
	lease   clientv3.LeaseID
	granted time.Time
}

// NewEtcdSink writes through client, queueing up to 1024 events.
func NewEtcdSink(client *clientv3.Client, log *slog.Logger) *EtcdSink {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &EtcdSink{client: client, queue: make(chan Event, 1024), log: log.With("component", "etcd-events")}
}

// Record implements Recorder.
func (s *EtcdSink) Record(e Event) {
	select {
	case s.queue <- e:
	default:
		s.drop(1)
	}
}

func (s *EtcdSink) drop(n int) {
	s.mu.Lock()
	s.dropped += n
	s.mu.Unlock()
}

// Dropped returns how many events were dropped on a full queue or a failed
// write.
func (s *EtcdSink) Dropped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Key returns the etcd key of e.
func Key(e Event) string {
	return fmt.Sprintf("/events/%s/%s/%d", e.Namespace, e.Object(), e.Time.UnixNano())
}

// Run writes queued events until ctx ends.
func (s *EtcdSink) Run(ctx context.Context) {
	clk := s.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	window := s.Window
	if window <= 0 {
		window = DefaultEventWindow
	}
	for {
		var batch []Event
		select {
		case <-ctx.Done():
			return
		case e := <-s.queue:
			batch = append(batch, e)
		}
		t := clk.NewTimer(window)
	gather:
		for len(batch) < maxTxnOps {
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case e := <-s.queue:
				batch = append(batch, e)
			case <-t.C():
				break gather
			}
		}
		t.Stop()
		if err := s.write(ctx, clk, batch); err != nil && ctx.Err() == nil {
			s.drop(len(batch))
			s.log.Warn("events not written to etcd", "events", len(batch), "first", Key(batch[0]), "err", err)
		}
	}
}

// write puts batch in one transaction; two events of a pod at the same
// instant get keys a nanosecond apart.
func (s *EtcdSink) write(ctx context.Context, clk clock.Clock, batch []Event) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if s.lease == 0 || clk.Since(s.granted) > EventTTL/2 {
		l, err := s.client.Grant(ctx, int64(EventTTL/time.Second))
		if err != nil {
			return fmt.Errorf("lease: %w", err)
		}
		s.lease, s.granted = l.ID, clk.Now()
	}
	ops := make([]clientv3.Op, 0, len(batch))
	keys := make(map[string]bool, len(batch))
	for _, e := range batch {
		k := Key(e)
		for keys[k] {
			e.Time = e.Time.Add(time.Nanosecond)
			k = Key(e)
		}
		keys[k] = true
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		ops = append(ops, clientv3.OpPut(k, string(b), clientv3.WithLease(s.lease)))
	}
	if _, err := s.client.Txn(ctx).Then(ops...).Commit(); err != nil {
		s.lease = 0 // the lease may be gone (etcd restored); grant anew next time
		return err
	}
	return nil
}
