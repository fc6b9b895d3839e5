package events

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// EventTTL is how long events live in etcd, as in the seed kubelet.
const EventTTL = 48 * time.Hour

// EtcdSink writes events to /events/<ns>/<pod>/<unix-nanos> under one shared
// lease of EventTTL, renewed by granting a new lease when it is half spent.
// Record queues; Run writes. A full queue drops events (and counts them).
type EtcdSink struct {
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
		s.mu.Lock()
		s.dropped++
		s.mu.Unlock()
	}
}

// Dropped returns how many events were dropped on a full queue.
func (s *EtcdSink) Dropped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Key returns the etcd key of e.
func Key(e Event) string {
	return fmt.Sprintf("/events/%s/%s/%d", e.Namespace, e.Pod, e.Time.UnixNano())
}

// Run writes queued events until ctx ends.
func (s *EtcdSink) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-s.queue:
			if err := s.write(ctx, e); err != nil && ctx.Err() == nil {
				s.log.Warn("event not written to etcd", "key", Key(e), "err", err)
			}
		}
	}
}

func (s *EtcdSink) write(ctx context.Context, e Event) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if s.lease == 0 || time.Since(s.granted) > EventTTL/2 {
		l, err := s.client.Grant(ctx, int64(EventTTL/time.Second))
		if err != nil {
			return fmt.Errorf("lease: %w", err)
		}
		s.lease, s.granted = l.ID, time.Now()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = s.client.Put(ctx, Key(e), string(b), clientv3.WithLease(s.lease))
	if err != nil {
		s.lease = 0 // the lease may be gone (etcd restored); grant anew next time
	}
	return err
}
