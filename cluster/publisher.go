package cluster

import (
	"context"
	"encoding/json"
	"log/slog"
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

// StatusFunc renders a stored pod's status as served at /pods.
type StatusFunc func(p *model.Pod) v1.PodStatus

// PublisherConfig configures a Publisher; zero durations take the defaults.
type PublisherConfig struct {
	// NodeKey is the node's key (<nodes prefix><node>); StatusPrefix holds
	// <ns>/<name> per pod.
	NodeKey      string
	StatusPrefix string
	// Interval is the least time between two writes (batches) of the node.
	Interval time.Duration
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
// was last written under that lease, batched (one etcd transaction per up
// to 128 keys) at most once per Interval; a pod gone from the store has its
// key deleted. Under a new lease everything is written again. Run is the
// only goroutine that touches its state.
type Publisher struct {
	cfg    PublisherConfig
	cli    *clientv3.Client
	lease  *Lease
	state  StateReader
	node   NodeFunc
	status StatusFunc

	written map[string]string
	lastErr string
}

// NewPublisher returns a publisher of pods' statuses and the node object.
func NewPublisher(cfg PublisherConfig, cli *clientv3.Client, lease *Lease, state StateReader, node NodeFunc, status StatusFunc) *Publisher {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultStatusInterval
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
	return &Publisher{cfg: cfg, cli: cli, lease: lease, state: state, node: node, status: status, written: map[string]string{}}
}

// Run publishes until ctx ends.
func (p *Publisher) Run(ctx context.Context) {
	clk := p.cfg.Clock
	var lease clientv3.LeaseID
	var last time.Time
	dirty := true
	check := clk.After(p.cfg.NodeCheck)
	for ctx.Err() == nil {
		id, leaseChanged := p.lease.Current()
		if id != lease {
			lease, p.written, dirty = id, map[string]string{}, true
		}
		ws := memdb.NewWatchSet()
		pods, err := p.state.Pods(ws)
		if err == nil {
			_, err = p.state.Sources(ws)
		}
		if err != nil {
			p.cfg.Log.Error("cannot read pods", "err", err)
		}
		var timer <-chan time.Time
		if dirty && id != 0 && err == nil {
			if wait := last.Add(p.cfg.Interval).Sub(clk.Now()); wait > 0 {
				timer = clk.After(wait)
			} else {
				last = clk.Now()
				if p.flush(ctx, id, pods) {
					dirty = false
				} else {
					timer = clk.After(p.cfg.Interval)
				}
			}
		}
		wctx, cancel := context.WithCancel(ctx)
		select {
		case <-ctx.Done():
		case <-leaseChanged:
		case <-ws.WatchCh(wctx):
			dirty = true
		case <-check:
			check, dirty = clk.After(p.cfg.NodeCheck), true
		case <-timer:
		}
		cancel()
	}
}

// want renders the value of every key the node should have.
func (p *Publisher) want(ctx context.Context, pods []*model.Pod) map[string]string {
	want := make(map[string]string, len(pods)+1)
	if p.node != nil {
		if b, err := json.Marshal(p.node(ctx, len(pods))); err == nil {
			want[p.cfg.NodeKey] = string(b)
		}
	}
	for _, pod := range pods {
		b, err := json.Marshal(p.status(pod))
		if err != nil {
			continue
		}
		want[PodKey(p.cfg.StatusPrefix, pod.Spec.Namespace, pod.Spec.Name)] = string(b)
	}
	return want
}

// flush writes what changed under lease id and reports whether all of it
// was written.
func (p *Publisher) flush(ctx context.Context, id clientv3.LeaseID, pods []*model.Pod) bool {
	want := p.want(ctx, pods)
	var keys []string
	for k, v := range want {
		if old, ok := p.written[k]; !ok || old != v {
			keys = append(keys, k)
		}
	}
	for k := range p.written {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return true
	}
	slices.Sort(keys)
	for chunk := range slices.Chunk(keys, maxTxnOps) {
		ops := make([]clientv3.Op, 0, len(chunk))
		for _, k := range chunk {
			if v, ok := want[k]; ok {
				ops = append(ops, clientv3.OpPut(k, v, clientv3.WithLease(id)))
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
			if v, ok := want[k]; ok {
				p.written[k] = v
			} else {
				delete(p.written, k)
			}
		}
		p.cfg.Metrics.StatusWrites(n)
	}
	if p.lastErr != "" {
		p.lastErr = ""
		p.cfg.Log.Info("pod statuses written to etcd again", "keys", len(p.written))
	}
	return true
}
