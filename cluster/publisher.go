package cluster

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	clientv3 "go.etcd.io/etcd/client/v3"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/model"
)

// Defaults of a Publisher's Config.
const (
	DefaultStatusInterval = time.Second
	// DefaultStatusCoalesce is the least time between two writes of
	// urgent changes: a burst of pods starting is one write per 50 ms.
	DefaultStatusCoalesce = 50 * time.Millisecond
	DefaultNodeCheck      = 5 * time.Second
	// maxTxnOps is etcd's default --max-txn-ops.
	maxTxnOps = 128
)

// StateReader is the store's read of desired pods with their status, and
// of the sources, whose sync the node's Ready condition reports.
type StateReader interface {
	Pods(ws memdb.WatchSet) ([]*model.Pod, error)
	Sources(ws memdb.WatchSet) ([]*model.Source, error)
}

// NodeFunc renders the node's v1.Node for pods pods; it must be
// deterministic for an unchanged node (no heartbeat times), or every call
// would write.
type NodeFunc func(ctx context.Context, pods int) v1.Node

// StatusFunc renders a stored pod's status as served at /pods. It must be
// a function of the pod object alone: an object seen before is not
// rendered again.
type StatusFunc func(p *model.Pod) v1.PodStatus

// PublisherConfig configures a Publisher; zero durations take the defaults.
type PublisherConfig struct {
	// NodeKey is the node's key (<nodes prefix><node>); StatusPrefix holds
	// <ns>/<name> per pod.
	NodeKey      string
	StatusPrefix string
	// Interval is the longest an ordinary change (a new Pending pod, a
	// restart count, the node object) waits, to be batched with others.
	Interval time.Duration
	// Coalesce is the least time between two writes of urgent changes (a
	// pod Running, Succeeded or Failed, its readiness, a pod gone).
	Coalesce time.Duration
	// NodeCheck is how often the node object is rendered again without
	// any pod change (its conditions may have changed).
	NodeCheck      time.Duration
	RequestTimeout time.Duration
	Clock          clock.Clock
	Metrics        Metrics
	Log            *slog.Logger
}

// Publisher writes the node key and the status key of every pod in the
// store under the node's lease, each only when its value changed since it
// was last written under that lease, in etcd transactions of up to 128
// keys; a pod gone from the store has its key deleted. Under a new lease
// everything is written again. When it writes is the pacer's: a change
// users wait for is written at once, bursts are coalesced, other changes
// are batched for up to Interval, and nothing is written while nothing
// changes. A pod's status is rendered only when its store object changed.
// Run is the only goroutine that touches its state.
type Publisher struct {
	cfg    PublisherConfig
	cli    *clientv3.Client
	lease  *Lease
	state  StateReader
	node   NodeFunc
	status StatusFunc

	cache statusCache
	// written is what etcd holds under the current lease; dirty the keys
	// whose value differs from it, with the value to write (ok false: to
	// delete).
	written map[string]keyValue
	dirty   map[string]keyValue
	lastErr string
}

// NewPublisher returns a publisher of pods' statuses and the node object.
func NewPublisher(cfg PublisherConfig, cli *clientv3.Client, lease *Lease, state StateReader, node NodeFunc, status StatusFunc) *Publisher {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultStatusInterval
	}
	if cfg.Coalesce <= 0 {
		cfg.Coalesce = min(DefaultStatusCoalesce, cfg.Interval)
	}
	if cfg.NodeCheck <= 0 {
		cfg.NodeCheck = DefaultNodeCheck
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 10 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Metrics == nil {
		cfg.Metrics = noMetrics{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.Log = cfg.Log.With("component", "etcd-status")
	return &Publisher{cfg: cfg, cli: cli, lease: lease, state: state, node: node, status: status,
		cache: statusCache{prefix: cfg.StatusPrefix, status: status}, written: map[string]keyValue{}, dirty: map[string]keyValue{}}
}

// Run publishes until ctx ends. It reads the store when it changed, except
// while an urgent write is pending: that write reads it just before.
func (p *Publisher) Run(ctx context.Context) {
	clk := p.cfg.Clock
	pace := pacer{interval: p.cfg.Interval, coalesce: p.cfg.Coalesce}
	var lease clientv3.LeaseID
	var podsCh, srcCh <-chan error
	stopWatch := func() {}
	defer func() { stopWatch() }()
	read := true
	// fresh: the store was read since the last flush or wait. A flush
	// reads it first whether or not its watch fired yet: the watch's
	// channel is closed by a goroutine that may not have run.
	fresh := false
	check := clk.After(p.cfg.NodeCheck)
	for ctx.Err() == nil {
		id, leaseChanged := p.lease.Current()
		if id != lease {
			lease = id
			p.rewriteAll()
			pace.changed(clk.Now(), true)
		}
		at, pending := pace.due()
		flushNow := id != 0 && pending && !at.After(clk.Now())
		_, urgent := pace.pending()
		var retry <-chan time.Time
		if (read || (flushNow && !fresh)) && (flushNow || id == 0 || !urgent) {
			stopWatch()
			wctx, cancel := context.WithCancel(ctx)
			stopWatch = cancel
			podsWS, srcWS := memdb.NewWatchSet(), memdb.NewWatchSet()
			pods, err := p.state.Pods(podsWS)
			if err == nil {
				_, err = p.state.Sources(srcWS)
			}
			if err != nil {
				p.cfg.Log.Error("cannot read pods", "err", err)
				retry = clk.After(p.cfg.Interval)
			} else {
				read, fresh = false, true
				podsCh, srcCh = podsWS.WatchCh(wctx), srcWS.WatchCh(wctx)
				p.refresh(pods, clk.Now(), &pace)
				continue
			}
		}
		if flushNow {
			// A write is timed from its start: what changes meanwhile is
			// read after it.
			now := clk.Now()
			if p.flush(ctx, id) {
				pace.wrote(now)
			} else {
				pace.failed(now)
			}
			fresh = false
			continue
		}
		var timer <-chan time.Time
		if id != 0 && pending {
			timer = clk.After(at.Sub(clk.Now()))
		}
		select {
		case <-ctx.Done():
		case <-leaseChanged:
		case <-podsCh:
			podsCh, read = nil, true
		case <-srcCh:
			// A source synced or failed: the node's Ready condition may
			// follow.
			srcCh, read = nil, true
			pace.changed(clk.Now(), false)
		case <-check:
			check = clk.After(p.cfg.NodeCheck)
			pace.changed(clk.Now(), false)
		case <-timer:
		case <-retry:
		}
		fresh = false
	}
}

// refresh renders the pods that changed and records what differs from
// etcd with the pacer.
func (p *Publisher) refresh(pods []*model.Pod, now time.Time, pace *pacer) {
	p.cache.refresh(pods, func(key string, kv keyValue) {
		was, ok := p.written[key]
		if ok && was.ok == kv.ok && was.value == kv.value {
			delete(p.dirty, key)
			return
		}
		if !kv.ok && !ok {
			delete(p.dirty, key)
			return
		}
		p.dirty[key] = kv
		pace.changed(now, urgentChange(was, kv) || (!kv.ok && ok))
	}, func(key string) {
		if _, ok := p.written[key]; !ok {
			delete(p.dirty, key)
			return
		}
		p.dirty[key] = keyValue{}
		pace.changed(now, true)
	})
}

// rewriteAll forgets what was written (a new lease holds none of it): every
// key is to be written again.
func (p *Publisher) rewriteAll() {
	p.written, p.dirty = map[string]keyValue{}, map[string]keyValue{}
	p.cache.each(func(key string, kv keyValue) {
		if kv.ok {
			p.dirty[key] = kv
		}
	})
}

// flush renders the node and writes every dirty key under lease id; it
// reports whether all of it was written.
func (p *Publisher) flush(ctx context.Context, id clientv3.LeaseID) bool {
	if p.node != nil {
		if b, err := json.Marshal(p.node(ctx, len(p.cache.entries))); err == nil {
			kv := keyValue{value: string(b), ok: true}
			if was, ok := p.written[p.cfg.NodeKey]; !ok || was.value != kv.value {
				p.dirty[p.cfg.NodeKey] = kv
			}
		}
	}
	if len(p.dirty) == 0 {
		return true
	}
	keys := slices.Sorted(maps.Keys(p.dirty))
	for chunk := range slices.Chunk(keys, maxTxnOps) {
		ops := make([]clientv3.Op, 0, len(chunk))
		for _, k := range chunk {
			if kv := p.dirty[k]; kv.ok {
				ops = append(ops, clientv3.OpPut(k, kv.value, clientv3.WithLease(id)))
			} else {
				ops = append(ops, clientv3.OpDelete(k))
			}
		}
		tctx, cancel := context.WithTimeout(ctx, p.cfg.RequestTimeout)
		_, err := p.cli.Txn(tctx).Then(ops...).Commit()
		cancel()
		if err != nil {
			if msg := err.Error(); msg != p.lastErr && ctx.Err() == nil {
				p.lastErr = msg
				p.cfg.Log.Warn("cannot write pod statuses to etcd; retrying", "err", err, "keys", len(keys))
			}
			return false
		}
		n := 0
		for _, k := range chunk {
			if k != p.cfg.NodeKey {
				n++
			}
			if kv := p.dirty[k]; kv.ok {
				p.written[k] = kv
			} else {
				delete(p.written, k)
			}
			delete(p.dirty, k)
		}
		p.cfg.Metrics.StatusWrites(n)
	}
	if p.lastErr != "" {
		p.lastErr = ""
		p.cfg.Log.Info("pod statuses written to etcd again", "keys", len(p.written))
	}
	return true
}
