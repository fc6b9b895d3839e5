// Package cluster publishes one berth node to a shared etcd: the node's
// lease and its key under the nodes prefix, and the v1 PodStatus of each of
// its pods under its status prefix, both bound to the lease so that a dead
// node's keys expire. It also reads them back for the CLI.
package cluster

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/utils/clock"
)

// DefaultLeaseTTL is the node lease's TTL; it is renewed at a third of it.
const DefaultLeaseTTL = 40 * time.Second

// Metrics is what the cluster publishers report; metrics/ implements it.
type Metrics interface {
	// LeaseRenewed counts one renewal attempt of the node lease.
	LeaseRenewed(ok bool)
	// StatusWrites counts keys put or deleted under the status prefix.
	StatusWrites(n int)
}

type noMetrics struct{}

func (noMetrics) LeaseRenewed(bool) {}
func (noMetrics) StatusWrites(int)  {}

// Lease keeps one etcd lease of TTL alive for a node: Run grants it,
// renews it every TTL/3, grants a new one when etcd no longer knows it
// (expired while etcd was unreachable, or a restored cluster), and revokes
// it when ctx ends, so the node's keys go at once on a clean stop. Users
// follow Current, whose channel closes whenever the lease changes.
type Lease struct {
	cli     *clientv3.Client
	ttl     time.Duration
	clock   clock.Clock
	metrics Metrics
	log     *slog.Logger
	timeout time.Duration

	mu      sync.Mutex
	id      clientv3.LeaseID
	changed chan struct{}
}

// NewLease returns a lease keeper; nil clk, m or log mean the real clock,
// no metrics, no logs.
func NewLease(cli *clientv3.Client, ttl time.Duration, clk clock.Clock, m Metrics, log *slog.Logger) *Lease {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	if m == nil {
		m = noMetrics{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Lease{cli: cli, ttl: ttl, clock: clk, metrics: m, log: log.With("component", "node-lease"),
		timeout: min(ttl/3, 5*time.Second), changed: make(chan struct{})}
}

// Current returns the lease (0 while there is none) and a channel closed
// when it changes.
func (l *Lease) Current() (clientv3.LeaseID, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.id, l.changed
}

func (l *Lease) set(id clientv3.LeaseID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id == l.id {
		return
	}
	l.id = id
	close(l.changed)
	l.changed = make(chan struct{})
}

// Run keeps the lease until ctx ends, then revokes it (bounded by a few
// seconds) and returns.
func (l *Lease) Run(ctx context.Context) {
	defer l.revoke()
	retry := l.ttl / 10
	for {
		id, _ := l.Current()
		var wait time.Duration
		if id == 0 {
			wait = l.grant(ctx, retry)
		} else {
			wait = l.renew(ctx, id, retry)
		}
		select {
		case <-ctx.Done():
			return
		case <-l.clock.After(wait):
		}
	}
}

// grant asks for a new lease and returns when to act next.
func (l *Lease) grant(ctx context.Context, retry time.Duration) time.Duration {
	gctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	resp, err := l.cli.Grant(gctx, int64((l.ttl+time.Second-1)/time.Second))
	if err != nil {
		if ctx.Err() == nil {
			l.log.Warn("cannot grant the node lease; retrying", "err", err, "retry", retry)
		}
		return retry
	}
	l.log.Info("node lease granted", "lease", int64(resp.ID), "ttl", l.ttl)
	l.set(resp.ID)
	return l.ttl / 3
}

// renew sends one keep-alive; a lease etcd does not know is dropped at once
// so that the next round grants a new one.
func (l *Lease) renew(ctx context.Context, id clientv3.LeaseID, retry time.Duration) time.Duration {
	rctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	resp, err := l.cli.KeepAliveOnce(rctx, id)
	switch {
	case err == nil && resp.TTL > 0:
		l.metrics.LeaseRenewed(true)
		return l.ttl / 3
	case err == nil || errors.Is(err, rpctypes.ErrLeaseNotFound):
		l.metrics.LeaseRenewed(false)
		l.log.Warn("node lease expired; granting a new one (the node key and statuses are written again)", "lease", int64(id))
		l.set(0)
		return 0
	case ctx.Err() != nil:
		return 0
	default:
		l.metrics.LeaseRenewed(false)
		l.log.Warn("cannot renew the node lease; retrying", "lease", int64(id), "err", err, "retry", retry)
		return retry
	}
}

func (l *Lease) revoke() {
	id, _ := l.Current()
	if id == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(l.timeout, 3*time.Second))
	defer cancel()
	if _, err := l.cli.Revoke(ctx, id); err != nil {
		l.log.Warn("cannot revoke the node lease; its keys expire with it", "lease", int64(id), "err", err)
	} else {
		l.log.Info("node lease revoked", "lease", int64(id))
	}
	l.set(0)
}
