package sources

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/berth-dev/berth/etcdclient"
	"github.com/berth-dev/berth/internal/backoff"
	"github.com/berth-dev/berth/manifest"
)

// Defaults of an EtcdSource's timing fields.
const (
	DefaultEtcdRequestTimeout = 10 * time.Second
	DefaultEtcdRetryInitial   = 500 * time.Millisecond
	DefaultEtcdRetryMax       = 30 * time.Second
	DefaultEtcdCheckInterval  = 30 * time.Second
)

// EtcdConfig says where an EtcdSource finds its pods.
type EtcdConfig struct {
	// Client is how to reach etcd (endpoints, TLS, auth, metrics).
	Client etcdclient.Config
	// Conn, when set, is the agent's one etcd client, shared with the
	// cluster member and the event sink: the source uses it instead of
	// dialling Client and never closes it.
	Conn *clientv3.Client
	// Prefix holds one key per pod (/registry/hosts/<node>/pods/<ns>/<name>),
	// each value a Pod manifest in YAML or JSON; the key is the origin.
	Prefix string
	// ObjectPrefixes hold one key per ConfigMap, Secret or claim
	// (/registry/hosts/<node>/configmaps/<ns>/<name>, .../secrets/...,
	// .../persistentvolumeclaims/...), read
	// and watched like Prefix.
	ObjectPrefixes []string
	// LegacyKey is the seed's single key holding a YAML/JSON list of
	// ContainerManifests or Pods; the key is the origin.
	LegacyKey string
}

// EtcdSource declares the pods stored in etcd under a prefix (one key per
// pod) and in a legacy key (a list), following the apiserver's etcd3 watcher
// pattern. Every value goes through Decode with its key as origin, so a key
// may in fact hold anything Decode accepts; a pod key claimed by two keys
// goes to the first key in byte order, the other gets an error.
//
// Run lists the prefix and the legacy key in one transaction (one revision),
// sends the full snapshot, then watches from the next revision: one watch on
// the smallest key range holding Prefix and LegacyKey (keys in it outside
// both are ignored), so that changes arrive in revision order even when a
// transaction touches both. Each watch response that changes a relevant key
// sends a new full snapshot. Values are decoded again only when they change;
// the pods of an unchanged key are sent as the same objects as before, so a
// put costs the decode of that key and a pointer compare per other pod.
//
// The etcd client resumes a watch by itself when the connection drops and
// comes back (e.g. an etcd restart), from the revision after the last event
// seen, so nothing is dropped or replayed. When the watch ends instead
// (compaction past that revision, a watch error or cancellation such as a
// lost leader, a closed channel), Run waits a backoff and relists through
// the same code path as at startup. While watching, Run checks every
// CheckInterval that etcd answers a quorum read: a failed check sends
// Update{Err} (pods kept, outage shown), a good one sends the snapshot
// again (liveness: the informer records the sync and changes nothing).
// A list that fails (etcd unreachable,
// RequestTimeout) sends Update{Err}: the source keeps all its pods and,
// before its first good list, stays unsynced; Run keeps retrying with a
// doubling backoff from RetryInitial to RetryMax.
type EtcdSource struct {
	// RequestTimeout bounds each list (DefaultEtcdRequestTimeout when
	// zero). Set before Run.
	RequestTimeout time.Duration
	// RetryInitial and RetryMax bound the backoff between failed lists and
	// before a relist (defaults DefaultEtcdRetryInitial/DefaultEtcdRetryMax).
	RetryInitial, RetryMax time.Duration
	// CheckInterval is how often a watching source checks that etcd
	// answers (DefaultEtcdCheckInterval when zero, never when negative).
	CheckInterval time.Duration

	name string
	cfg  EtcdConfig
	opts Options

	entries *origins
	lastErr string
	// clusterID and revision are those of the last list or watch event:
	// another cluster ID, or a lower revision, means etcd was replaced
	// (restored from a backup, or wiped) and the watch must relist.
	clusterID uint64
	revision  int64
	// events counts the watch events received, for simulations.
	events atomic.Int64
	warned warnLog
	gate   quotaGate
	// relisted says the entries were listed anew (or held a duplicate)
	// since the warnings were last logged: log them whole.
	relisted bool
}

// NewEtcdSource returns a source named name reading the etcd of cfg.
func NewEtcdSource(name string, cfg EtcdConfig, opts Options) *EtcdSource {
	cfg.Client.Endpoints = slices.Clone(cfg.Client.Endpoints)
	return &EtcdSource{name: name, cfg: cfg, opts: opts}
}

// Name returns the source's name.
func (s *EtcdSource) Name() string { return s.name }

// WatchEvents returns how many watch events the source has received.
func (s *EtcdSource) WatchEvents() int64 { return s.events.Load() }

func (s *EtcdSource) requestTimeout() time.Duration {
	if s.RequestTimeout > 0 {
		return s.RequestTimeout
	}
	return DefaultEtcdRequestTimeout
}

func (s *EtcdSource) retryPolicy() backoff.Policy {
	p := backoff.Policy{Initial: s.RetryInitial, Max: s.RetryMax}
	if p.Initial <= 0 {
		p.Initial = DefaultEtcdRetryInitial
	}
	if p.Max <= 0 {
		p.Max = DefaultEtcdRetryMax
	}
	if p.Max < p.Initial {
		p.Max = p.Initial
	}
	return p
}

// Run lists and watches until ctx ends, then returns nil. It must not be
// called more than once at a time.
func (s *EtcdSource) Run(ctx context.Context, out chan<- Update) error {
	log := s.opts.logger().With("source", s.name, "endpoints", strings.Join(s.cfg.Client.Endpoints, ","))
	if s.cfg.Prefix == "" && s.cfg.LegacyKey == "" {
		send(ctx, out, Update{Source: s.name, Err: errors.New("etcd: neither prefix nor legacy key is configured")})
		<-ctx.Done()
		return nil
	}
	clk := s.opts.clock()
	policy := s.retryPolicy()
	bo := backoff.New(policy, clk)
	retry := func() bool { return sleepCtx(ctx, clk, bo.Failed(s.name)) }
	cli := s.cfg.Conn
	if cli == nil {
		defer func() {
			if cli != nil {
				_ = cli.Close()
			}
		}()
	}
	for ctx.Err() == nil {
		if cli == nil {
			c, err := s.cfg.Client.New(ctx)
			if err != nil {
				if !s.failed(ctx, out, log, fmt.Errorf("etcd client: %w", err)) || !retry() {
					return nil
				}
				continue
			}
			cli = c
		}
		rev, err := s.list(ctx, cli)
		if err != nil {
			if ctx.Err() != nil || !s.failed(ctx, out, log, err) || !retry() {
				return nil
			}
			continue
		}
		if s.lastErr != "" {
			s.lastErr = ""
			log.Info("etcd readable again", "revision", rev)
		}
		if !send(ctx, out, s.snapshot()) {
			return nil
		}
		start := clk.Now()
		var replaced *replacedError
		err = s.watch(ctx, cli, rev, out)
		if ctx.Err() != nil {
			return nil
		}
		if clk.Since(start) > policy.Max {
			bo.Reset(s.name)
		}
		if errors.As(err, &replaced) {
			// Relist at once: the list decides what goes, never the change.
			log.Warn("etcd cluster replaced; relisting, pods stay until the new list is read", "err", err)
			continue
		}
		log.Warn("etcd watch ended; relisting", "err", err)
		if !retry() {
			return nil
		}
	}
	return nil
}

// failed sends Update{Err}; it reports false when ctx ended first.
func (s *EtcdSource) failed(ctx context.Context, out chan<- Update, log *slog.Logger, err error) bool {
	if msg := err.Error(); msg != s.lastErr {
		s.lastErr = msg
		log.Warn("cannot read etcd; keeping the last good pods", "err", err)
	}
	return send(ctx, out, Update{Source: s.name, Err: err})
}

// relevant reports whether key is one of the source's.
func (s *EtcdSource) relevant(key string) bool {
	for _, p := range s.prefixes() {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return s.cfg.LegacyKey != "" && key == s.cfg.LegacyKey
}

// prefixes are Prefix and ObjectPrefixes, the empty ones left out.
func (s *EtcdSource) prefixes() []string {
	var out []string
	for _, p := range append([]string{s.cfg.Prefix}, s.cfg.ObjectPrefixes...) {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// list reads the prefix and the legacy key at one revision and replaces the
// entries with what it found.
func (s *EtcdSource) list(ctx context.Context, cli *clientv3.Client) (int64, error) {
	var ops []clientv3.Op
	for _, p := range s.prefixes() {
		ops = append(ops, clientv3.OpGet(p, clientv3.WithPrefix()))
	}
	if s.cfg.LegacyKey != "" && !s.underPrefix(s.cfg.LegacyKey) {
		ops = append(ops, clientv3.OpGet(s.cfg.LegacyKey))
	}
	lctx, cancel := context.WithTimeout(ctx, s.requestTimeout())
	defer cancel()
	resp, err := cli.Txn(lctx).Then(ops...).Commit()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return 0, fmt.Errorf("etcd: listing %s: timed out after %s: %w", s.keysDesc(), s.requestTimeout(), err)
		}
		return 0, fmt.Errorf("etcd: listing %s: %w", s.keysDesc(), err)
	}
	if s.clusterID != 0 {
		if err := s.replaced(resp.Header); err != nil {
			s.opts.logger().Warn("etcd cluster replaced since the last list; its pods replace the old ones", "source", s.name, "err", err)
		}
	}
	s.clusterID, s.revision = resp.Header.ClusterId, resp.Header.Revision
	old := s.entries
	s.entries = newOrigins()
	s.relisted = true
	for _, r := range resp.Responses {
		rr := r.GetResponseRange()
		if rr == nil {
			continue
		}
		for _, kv := range rr.Kvs {
			key := string(kv.Key)
			if !s.relevant(key) {
				continue
			}
			if old != nil {
				if e := old.get(key); e != nil && bytes.Equal(e.value, kv.Value) {
					s.entries.set(key, e)
					continue
				}
			}
			s.entries.set(key, s.decode(key, kv.Value))
		}
	}
	return resp.Header.Revision, nil
}

func (s *EtcdSource) keysDesc() string {
	switch {
	case s.cfg.Prefix == "":
		return s.cfg.LegacyKey
	case s.cfg.LegacyKey == "":
		return s.cfg.Prefix + "*"
	}
	return s.cfg.Prefix + "* and " + s.cfg.LegacyKey
}

func (s *EtcdSource) decode(key string, value []byte) *originEntry {
	e := &originEntry{value: slices.Clone(value), size: int64(len(value))}
	e.decoded = manifest.DecodeAll(s.name, key, manifest.PodSequenceAsList(value), s.opts.Options)
	return e
}

// watchKey returns the key and options of the one watch that covers the
// prefix and the legacy key: the smallest range holding both, so that the
// node's other keys beside them (its status keys, /registry/hosts/<node>/
// status/, sort after pods/) are not watched.
func (s *EtcdSource) watchKey() (string, []clientv3.OpOption) {
	key, end := s.watchRange()
	if end == "" {
		return key, nil
	}
	return key, []clientv3.OpOption{clientv3.WithRange(end)}
}

// watchRange is watchKey's [key, end); end is "" for the legacy key alone.
func (s *EtcdSource) watchRange() (key, end string) {
	l := s.cfg.LegacyKey
	ps := s.prefixes()
	if len(ps) == 0 {
		return l, ""
	}
	key, end = ps[0], clientv3.GetPrefixRangeEnd(ps[0])
	for _, p := range ps[1:] {
		key, end = min(key, p), max(end, clientv3.GetPrefixRangeEnd(p))
	}
	if l == "" || s.underPrefix(l) {
		return key, end
	}
	return min(key, l), max(end, l+"\x00")
}

// underPrefix reports whether key is under one of the prefixes.
func (s *EtcdSource) underPrefix(key string) bool {
	for _, p := range s.prefixes() {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

var errWatchClosed = errors.New("etcd: watch channel closed")

// replacedError says etcd answered as another cluster, or from an earlier
// revision, than the one listed: it was restored or wiped.
type replacedError struct {
	clusterID, wasClusterID uint64
	revision, wasRevision   int64
}

func (e *replacedError) Error() string {
	if e.clusterID != e.wasClusterID {
		return fmt.Sprintf("etcd: cluster ID changed to %x from %x (revision %d, was %d)", e.clusterID, e.wasClusterID, e.revision, e.wasRevision)
	}
	return fmt.Sprintf("etcd: revision went back to %d from %d: restored from an earlier state?", e.revision, e.wasRevision)
}

// replaced returns a replacedError when h is not of the listed cluster or
// went back in revisions.
func (s *EtcdSource) replaced(h *etcdserverpb.ResponseHeader) error {
	if h == nil || h.ClusterId == 0 {
		return nil
	}
	if h.ClusterId != s.clusterID || h.Revision < s.revision {
		return &replacedError{clusterID: h.ClusterId, wasClusterID: s.clusterID, revision: h.Revision, wasRevision: s.revision}
	}
	return nil
}

// watch follows changes after rev and sends a snapshot after each watch
// response that changed a key; it returns why the watch ended (nil when ctx
// ended).
func (s *EtcdSource) watch(ctx context.Context, cli *clientv3.Client, rev int64, out chan<- Update) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	key, opts := s.watchKey()
	opts = append(opts, clientv3.WithRev(rev+1))
	ch := cli.Watch(wctx, key, opts...)
	var check <-chan time.Time
	if iv := s.checkInterval(); iv > 0 {
		t := s.opts.clock().NewTicker(iv)
		defer t.Stop()
		check = t.C()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-check:
			u, err := s.check(ctx, cli)
			if err != nil {
				return err
			}
			if !send(ctx, out, u) {
				return nil
			}
		case wr, ok := <-ch:
			if !ok {
				return errWatchClosed
			}
			if err := wr.Err(); err != nil {
				if wr.CompactRevision != 0 {
					return fmt.Errorf("etcd: watch from revision %d: %w (compacted at %d)", rev+1, err, wr.CompactRevision)
				}
				return fmt.Errorf("etcd: watch: %w", err)
			}
			if wr.Canceled {
				return errors.New("etcd: watch canceled")
			}
			if err := s.replaced(&wr.Header); err != nil {
				return err
			}
			s.revision = max(s.revision, wr.Header.Revision)
			changed := false
			s.events.Add(int64(len(wr.Events)))
			for _, ev := range wr.Events {
				k := string(ev.Kv.Key)
				if !s.relevant(k) {
					continue
				}
				changed = true
				switch ev.Type {
				case mvccpb.PUT:
					if e := s.entries.get(k); e != nil && bytes.Equal(e.value, ev.Kv.Value) {
						continue
					}
					s.entries.set(k, s.decode(k, ev.Kv.Value))
				case mvccpb.DELETE:
					s.entries.remove(k)
				}
				rev = ev.Kv.ModRevision
				s.revision = max(s.revision, rev)
			}
			if changed && !send(ctx, out, s.snapshot()) {
				return nil
			}
		}
	}
}

func (s *EtcdSource) checkInterval() time.Duration {
	if s.CheckInterval == 0 {
		return DefaultEtcdCheckInterval
	}
	return s.CheckInterval
}

// check asks etcd for the number of the source's keys (a linearizable read,
// so it needs a quorum): when that fails the source reports Update{Err},
// keeping its pods, which shows the outage in its status while the client
// waits to resume the watch; when it works the current snapshot is sent
// again, which records the sync. An answer from a replaced cluster returns
// a replacedError instead, for a relist.
func (s *EtcdSource) check(ctx context.Context, cli *clientv3.Client) (Update, error) {
	key, opts := s.watchKey()
	cctx, cancel := context.WithTimeout(ctx, s.requestTimeout())
	defer cancel()
	resp, err := cli.Get(cctx, key, append(opts, clientv3.WithCountOnly())...)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("timed out after %s: %w", s.requestTimeout(), err)
		}
		err = fmt.Errorf("etcd: unreachable while watching (pods kept; the watch resumes when it is back): %w", err)
		if msg := err.Error(); msg != s.lastErr {
			s.lastErr = msg
			s.opts.logger().Warn("cannot reach etcd", "source", s.name, "err", err)
		}
		return Update{Source: s.name, Err: err}, nil
	}
	if err := s.replaced(resp.Header); err != nil {
		return Update{}, err
	}
	// The cluster's revision, moved by any writer: a wipe then sends it
	// back below this even when no key of the source changed.
	s.revision = max(s.revision, resp.Header.Revision)
	if s.lastErr != "" {
		s.lastErr = ""
		s.opts.logger().Info("etcd reachable again", "source", s.name)
	}
	return s.snapshot(), nil
}

// snapshot builds the full Update of the current entries, within the
// source's quota. Pods of keys that did not change are the objects sent
// before (never mutated), and only pods new since the last snapshot are
// walked for their warnings.
func (s *EtcdSource) snapshot() Update {
	u := s.entries.snapshot(s.name)
	log := s.opts.logger().With("source", s.name)
	added, dropped := s.entries.takeChanges()
	if s.relisted || s.entries.dups > 0 {
		// A pod hidden by another key's is not in the update: the change
		// alone does not say which pods are.
		s.warned.log(log, u.Pods)
		s.relisted = s.entries.dups > 0
	} else {
		s.warned.change(log, added, dropped)
	}
	return s.gate.admit(s.name, s.opts.Quota, u, s.entries.sizeOf)
}
