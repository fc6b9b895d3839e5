// Package scale simulates many berth agents in one process, each on the
// in-memory runtime, against a real three-member etcd cluster: pods are
// applied through etcd as users apply them, and what the agents cost etcd
// (writes, watch traffic, database size) and how fast the pods reach
// Running in their status keys is measured from outside, by one watcher.
//
//	go test -run '^$' -bench HundredAgents -benchtime 1x -timeout 30m ./test/scale/
//
// BERTH_SIM_AGENTS (100), BERTH_SIM_PODS (pods per agent, 100) and
// BERTH_SIM_STEADY (the idle window, 60s) size the run; BERTH_SIM_EVENTS=0
// keeps the agents' events out of etcd (sources.etcd.events false),
// BERTH_SIM_BASELINE=0 skips timing the same puts on an etcd without agents
// first.
//
//	BERTH_SIM_ROOT=/dev/shm go test -run '^$' -bench OneNodeLinear -benchtime 1x -count 3 ./test/scale/
//
// puts 1,000 pods one by one on one agent (BERTH_LINEAR_PODS, windows of
// BERTH_LINEAR_WINDOW = 100) and prints the process's CPU per put in each
// window, the last over the first (goal ≤ 1.2).
package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/restarts"
	"github.com/berth-dev/berth/runtime/fake"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/admission"
	"github.com/berth-dev/berth/cluster"
	"github.com/berth-dev/berth/controller"
	"github.com/berth-dev/berth/etcdclient"
	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/informer"
	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/podview"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/server"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/store"
)

const (
	appImage   = "app:1"
	pauseImage = "berth/pause:sim"
	// putters is how many goroutines apply the manifests.
	putters = 8
	// baseHostPort is the first pod's hostPort on each node.
	baseHostPort = 20000
)

// simConfig sizes one simulation; the timings are the agent's, production
// defaults in the benchmark.
type simConfig struct {
	agents, pods int
	// steady is the idle window after everything runs whose etcd writes
	// are counted (the goal is none).
	steady time.Duration
	// quiet is how long the revision must stand still before the steady
	// window starts (the last batched status writes land meanwhile).
	quiet time.Duration
	// Agent timings: controller.resync, sources.etcd.check_interval, the
	// publisher's node check, sources.etcd.status_interval and lease_ttl.
	resync, check, nodeCheck, statusInterval, leaseTTL time.Duration
	// baseline first times the same puts on a fresh cluster without agents.
	baseline bool
	// etcdEvents writes the agents' events to etcd, as an agent with etcd
	// configured does.
	etcdEvents bool
	// timeout bounds the wait for every pod to run.
	timeout time.Duration
	// nodeScale multiplies the node's capacity (4 CPUs, 16 GiB) for runs
	// of more pods than it fits (zero: 1).
	nodeScale int64
}

func (c simConfig) nodeCPUMilli() int64 { return 4000 * max(c.nodeScale, 1) }
func (c simConfig) nodeMemory() int64   { return 16 << 30 * max(c.nodeScale, 1) }

func envInt(name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err == nil && n > 0 {
			return n
		}
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v := os.Getenv(name); v != "" {
		d, err := time.ParseDuration(v)
		if err == nil && d >= 0 {
			return d
		}
	}
	return def
}

// opCounter counts etcd requests by operation (etcdclient.Observer), across
// all agents.
type opCounter struct {
	mu  sync.Mutex
	ops map[string]int64
}

func (o *opCounter) EtcdRequest(op string, _ time.Duration, _ error) {
	o.mu.Lock()
	o.ops[op]++
	o.mu.Unlock()
}

// take returns the counts since the last take.
func (o *opCounter) take() map[string]int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := o.ops
	o.ops = map[string]int64{}
	return m
}

// simAgent is one berth agent as package agent wires it for etcd, on the fake
// runtime: queue, store, controller, source and Docker informers, the
// etcd source, events sink, node lease and status publisher. No API server
// and no cAdvisor.
type simAgent struct {
	node    string
	rt      *fake.Runtime
	st      *store.Store
	cli     *clientv3.Client
	ctrl    *controller.Controller
	srcInf  *informer.SourceInformer
	dockInf *informer.DockerInformer
	src     *sources.EtcdSource
	sink    *events.EtcdSink
	lease   *cluster.Lease
	pub     *cluster.Publisher
	stopped chan struct{}
}

func newSimAgent(ctx context.Context, tb testing.TB, cfg simConfig, node, rootDir string, eps []string, obs etcdclient.Observer) *simAgent {
	tb.Helper()
	a := &simAgent{node: node, stopped: make(chan struct{})}
	clk := clock.RealClock{}
	queue := controller.NewQueue(clk, nil)
	st, err := store.New(func(key string) {
		if key != "" {
			queue.Add(key)
		}
	})
	if err != nil {
		tb.Fatal(err)
	}
	a.st = st
	a.rt = fake.New(nil)
	a.rt.AddImage(appImage)
	a.rt.AddImage(pauseImage)
	ec := etcdclient.Config{Endpoints: eps, Observer: obs}
	// The agent's one client (source, lease, statuses, events), as
	// agent.New makes.
	cli, err := ec.New(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	a.cli = cli
	var rec events.Recorder = events.Discard{}
	if cfg.etcdEvents {
		a.sink = events.NewEtcdSink(cli, nil)
		rec = a.sink
	}
	a.ctrl = controller.New(controller.Config{
		Node:       node,
		NodeInfo:   controller.NodeInfo{IP: "10.0.0.1", CPUMilli: cfg.nodeCPUMilli(), Memory: cfg.nodeMemory()},
		RootDir:    rootDir,
		Workers:    4,
		Resync:     cfg.resync,
		Backoff:    restarts.Backoff{Initial: 10 * time.Second, Max: 300 * time.Second},
		PauseImage: pauseImage,
		Clock:      clk,
		Events:     rec,
	}, st, a.rt, queue)
	a.srcInf = informer.NewSourceInformer(st, clk, nil, nil)
	// As agent.Run sets it: new pods must fit the node.
	a.srcInf.Node = &admission.Node{Name: node, OS: goruntime.GOOS, CPUMilli: cfg.nodeCPUMilli(), Memory: cfg.nodeMemory()}
	a.src = sources.NewEtcdSource("etcd", sources.EtcdConfig{Client: ec, Conn: cli, Prefix: cluster.PodsPrefix(node),
		LegacyKey: cluster.DefaultHostsPrefix + node + "/kubelet"}, sources.Options{Options: manifest.Options{Node: node}})
	a.src.CheckInterval = cfg.check
	if err := a.srcInf.Register(a.src.Name()); err != nil {
		tb.Fatal(err)
	}
	a.dockInf = informer.NewDockerInformer(a.rt, st, node, clk, nil, nil)
	a.lease = cluster.NewLease(cli, cfg.leaseTTL, nil, nil, nil)
	host := cluster.HostInfo{Name: node, Version: "sim", CPUMilli: cfg.nodeCPUMilli(), Memory: cfg.nodeMemory(), MaxPods: 110,
		OS: goruntime.GOOS, Arch: goruntime.GOARCH, Kernel: "sim", Started: time.Now(),
		Addresses:      []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.1"}, {Type: v1.NodeHostName, Address: node}},
		RuntimeVersion: func(context.Context) (string, error) { return "fake://1", nil },
	}
	checks := []cluster.Check{
		{Reason: "DockerUnreachable", Err: func(context.Context) error {
			if !a.dockInf.Synced() {
				return fmt.Errorf("docker containers not listed yet")
			}
			return nil
		}},
		{Reason: "SourcesNotSynced", Err: server.SourcesSynced(st)},
	}
	reporter := cluster.NewNodeReporter(host, checks, clk)
	a.pub = cluster.NewPublisher(cluster.PublisherConfig{
		NodeKey:      cluster.DefaultNodesPrefix + node,
		StatusPrefix: cluster.StatusPrefix(node),
		Interval:     cfg.statusInterval,
		NodeCheck:    cfg.nodeCheck,
		Clock:        clk,
	}, cli, a.lease, st, reporter.Node, podview.Status)
	return a
}

// run is agent.Run without the API server: the engine informer, events,
// lease and publisher at once, the sources and the controller once the
// engine is listed. It returns when ctx ends and everything stopped.
func (a *simAgent) run(ctx context.Context) {
	defer close(a.stopped)
	defer a.cli.Close()
	var wg sync.WaitGroup
	goFn := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	goFn(func() { a.dockInf.Run(ctx) })
	if a.sink != nil {
		goFn(func() { a.sink.Run(ctx) })
	}
	goFn(func() { a.lease.Run(ctx) })
	goFn(func() { a.pub.Run(ctx) })
	if waitUntil(ctx, a.dockInf.Synced) {
		updates := make(chan sources.Update)
		goFn(func() { a.srcInf.Run(ctx, updates) })
		goFn(func() { _ = a.src.Run(ctx, updates) })
		goFn(func() { a.ctrl.Run(ctx) })
	}
	wg.Wait()
}

func waitUntil(ctx context.Context, cond func() bool) bool {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return true
}

// podName is the name of pod i of a node.
func podName(i int) string { return fmt.Sprintf("pod-%04d", i) }

func nodeName(i int) string { return fmt.Sprintf("sim-%03d", i) }

// podManifest is what a user writes: one container, one port with a hostPort
// distinct within the node, resource requests.
func podManifest(name string, hostPort int) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":"default","labels":{"app":"sim"}},`+
		`"spec":{"containers":[{"name":"app","image":%q,"ports":[{"containerPort":8080,"hostPort":%d,"protocol":"TCP"}],`+
		`"resources":{"requests":{"cpu":"10m","memory":"16Mi"}}}]}}`, name, appImage, hostPort)
}

// watcher follows every key from one revision on with one watch and one
// clock: when each pod's status key first says Running, and which kind of
// write each revision was.
type watcher struct {
	mu       sync.Mutex
	put      map[string]time.Time // "node/pod" -> start of its manifest put
	running  map[string]time.Time // "node/pod" -> first status Running
	want     int
	done     chan struct{}
	statuses int64            // status key puts seen
	revs     map[string]int64 // revisions by kind of write
	lastRev  int64
	lastKind string
	events   int64 // watch events received
	err      error
}

func newWatcher(want int) *watcher {
	return &watcher{put: map[string]time.Time{}, running: map[string]time.Time{}, want: want, done: make(chan struct{}),
		revs: map[string]int64{}}
}

// kindOf names the writer of key.
func kindOf(key string) string {
	switch {
	case strings.HasPrefix(key, cluster.DefaultNodesPrefix):
		return "status" // the node key goes in the publisher's transactions
	case strings.HasPrefix(key, "/events/"):
		return "event"
	case strings.HasPrefix(key, cluster.DefaultHostsPrefix):
		parts := strings.Split(strings.TrimPrefix(key, cluster.DefaultHostsPrefix), "/")
		if len(parts) >= 2 && parts[1] == "status" {
			return "status"
		}
		if len(parts) >= 2 && parts[1] == "pods" {
			return "manifest"
		}
	}
	return "other"
}

func (w *watcher) markPut(id string, t time.Time) {
	w.mu.Lock()
	w.put[id] = t
	w.mu.Unlock()
}

func (w *watcher) run(ctx context.Context, cli *clientv3.Client, fromRev int64) {
	ch := cli.Watch(clientv3.WithRequireLeader(ctx), "/", clientv3.WithPrefix(), clientv3.WithRev(fromRev))
	for wr := range ch {
		now := time.Now()
		if err := wr.Err(); err != nil {
			w.mu.Lock()
			w.err = err
			w.mu.Unlock()
			return
		}
		w.mu.Lock()
		w.events += int64(len(wr.Events))
		for _, ev := range wr.Events {
			key := string(ev.Kv.Key)
			kind := kindOf(key)
			if ev.Kv.ModRevision != w.lastRev {
				w.lastRev, w.lastKind = ev.Kv.ModRevision, kind
				w.revs[kind]++
			}
			if kind != "status" || ev.Type != clientv3.EventTypePut || !strings.HasPrefix(key, cluster.DefaultHostsPrefix) {
				continue
			}
			w.statuses++
			parts := strings.Split(strings.TrimPrefix(key, cluster.DefaultHostsPrefix), "/")
			if len(parts) != 4 {
				continue
			}
			id := parts[0] + "/" + parts[3]
			if _, seen := w.running[id]; seen {
				continue
			}
			var s struct {
				Phase v1.PodPhase `json:"phase"`
			}
			if json.Unmarshal(ev.Kv.Value, &s) == nil && s.Phase == v1.PodRunning {
				w.running[id] = now
				if len(w.running) == w.want {
					close(w.done)
				}
			}
		}
		w.mu.Unlock()
	}
}

// latencies returns each pod's put-to-Running time, sorted, and the last
// Running time.
func (w *watcher) latencies() ([]time.Duration, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []time.Duration
	var last time.Time
	for id, r := range w.running {
		if p, ok := w.put[id]; ok {
			out = append(out, r.Sub(p))
		}
		if r.After(last) {
			last = r
		}
	}
	slices.Sort(out)
	return out, last
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := int(p*float64(len(d))+0.5) - 1
	return d[min(max(i, 0), len(d)-1)]
}

// startTimes returns, sorted, each pod's start time (its put to all its
// containers running, the agent's StartedAt) and its publish delay (that
// moment to its status key first saying Running).
func (w *watcher) startTimes(tb testing.TB, agents []*simAgent) (started, published []time.Duration) {
	tb.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, a := range agents {
		pods, err := a.st.Pods(nil)
		if err != nil {
			tb.Fatal(err)
		}
		for _, p := range pods {
			id := a.node + "/" + p.Spec.Name
			put, ok := w.put[id]
			ran, seen := w.running[id]
			if !ok || !seen || p.StartedAt.IsZero() {
				continue
			}
			started = append(started, p.StartedAt.Sub(put))
			published = append(published, ran.Sub(p.StartedAt))
		}
	}
	slices.Sort(started)
	slices.Sort(published)
	return started, published
}

// simResult is what one simulation measured.
type simResult struct {
	agents, pods                 int
	applyTook, allRunning        time.Duration
	p50, p90, p99, pmax          time.Duration
	startP50, startP99           time.Duration    // put → all containers running (agent's StartedAt)
	publishP50, publishP99       time.Duration    // StartedAt → status key Running
	revsApply                    int64            // revisions from the first put to quiet
	revsByKind                   map[string]int64 // same, by writer
	statusPuts                   int64            // status key puts seen
	revsSteady                   int64            // revisions in the steady window
	steady                       time.Duration
	steadyOps                    map[string]int64 // etcd requests in the steady window
	revsPerSec                   float64          // revisions per second, first put to quiet
	fsyncMean                    time.Duration    // largest mean WAL fsync of a member, same time
	fsyncs                       int64            // WAL fsyncs of all members, same time
	baselineTook                 time.Duration    // the puts alone, no agent (0: not run)
	dbEmpty, dbBefore, dbAfter   int64            // max DbSize over the members
	dbInUseBefore, dbInUseAfter  int64            // max DbSizeInUse
	watchEvents, watchEventsMax  int64            // total and max per agent
	heapPerAgent                 float64          // bytes
	heapBefore, heapAfter        uint64
	startupTook, quietTook       time.Duration
	goroutinesAgents             int
	eventsDropped                int
	perAgentRunning, wrongEngine int
}

// applyPods puts the manifests of pods pods over agents nodes from
// putters goroutines, pod j to node j%agents, telling mark when each put
// starts; it returns how long all the puts took.
func applyPods(ctx context.Context, tb testing.TB, cli *clientv3.Client, agents, pods int, mark func(id string, t time.Time)) time.Duration {
	tb.Helper()
	start := time.Now()
	jobs := make(chan int)
	errs := make(chan error, putters)
	var pw sync.WaitGroup
	for range putters {
		pw.Add(1)
		go func() {
			defer pw.Done()
			for j := range jobs {
				node, i := nodeName(j%agents), j/agents
				key := cluster.PodKey(cluster.PodsPrefix(node), "default", podName(i))
				mark(node+"/"+podName(i), time.Now())
				pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				_, err := cli.Put(pctx, key, podManifest(podName(i), baseHostPort+i))
				cancel()
				if err != nil {
					select {
					case errs <- fmt.Errorf("put %s: %w", key, err):
					default:
					}
				}
			}
		}()
	}
	for j := range pods {
		jobs <- j
	}
	close(jobs)
	pw.Wait()
	took := time.Since(start)
	select {
	case err := <-errs:
		tb.Fatal(err)
	default:
	}
	return took
}

// baseline is the same apply on a fresh cluster with no agent: what this
// machine's etcd takes for the puts alone. The cluster is stopped after.
func baseline(ctx context.Context, tb testing.TB, cfg simConfig) time.Duration {
	tb.Helper()
	c := testutil.StartEtcdCluster(tb, 3)
	defer func() {
		for i := range c.Endpoints() {
			c.StopMember(i)
		}
	}()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		tb.Fatal(err)
	}
	defer cli.Close()
	return applyPods(ctx, tb, cli, cfg.agents, cfg.agents*cfg.pods, func(string, time.Time) {})
}

// fsyncStat is one member's WAL fsync count and total seconds.
type fsyncStat struct {
	count, sum float64
}

// metricsClient keeps no idle connection (and so no goroutine) between
// scrapes.
var metricsClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// etcdFsyncs reads each member's etcd_disk_wal_fsync_duration_seconds.
func etcdFsyncs(ctx context.Context, tb testing.TB, eps []string) []fsyncStat {
	tb.Helper()
	out := make([]fsyncStat, len(eps))
	for i, ep := range eps {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, ep+"/metrics", nil)
		resp, err := metricsClient.Do(req)
		if err != nil {
			cancel()
			tb.Fatalf("etcd metrics of %s: %v", ep, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil {
			tb.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) != 2 {
				continue
			}
			v, _ := strconv.ParseFloat(f[1], 64)
			switch f[0] {
			case "etcd_disk_wal_fsync_duration_seconds_count":
				out[i].count = v
			case "etcd_disk_wal_fsync_duration_seconds_sum":
				out[i].sum = v
			}
		}
	}
	return out
}

// fsyncDelta returns the largest mean WAL fsync of the members between a
// and b, and their fsyncs in all.
func fsyncDelta(a, b []fsyncStat) (mean time.Duration, n int64) {
	for i := range a {
		c, s := b[i].count-a[i].count, b[i].sum-a[i].sum
		n += int64(c)
		if c > 0 {
			mean = max(mean, time.Duration(s/c*float64(time.Second)))
		}
	}
	return mean, n
}

// revision is etcd's current revision.
func revision(ctx context.Context, tb testing.TB, cli *clientv3.Client) int64 {
	tb.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "/", clientv3.WithCountOnly())
	if err != nil {
		tb.Fatalf("etcd revision: %v", err)
	}
	return resp.Header.Revision
}

// dbSize is the largest database size, and size in use, of the members.
func dbSize(ctx context.Context, tb testing.TB, cli *clientv3.Client, eps []string) (size, inUse int64) {
	tb.Helper()
	for _, ep := range eps {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := cli.Status(ctx, ep)
		cancel()
		if err != nil {
			tb.Fatalf("etcd status of %s: %v", ep, err)
		}
		size, inUse = max(size, resp.DbSize), max(inUse, resp.DbSizeInUse)
	}
	return size, inUse
}

// waitQuiet waits until the revision stood still for quiet and returns it.
func waitQuiet(ctx context.Context, tb testing.TB, cli *clientv3.Client, quiet, timeout time.Duration) int64 {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	rev := revision(ctx, tb, cli)
	since := time.Now()
	for time.Since(since) < quiet {
		if time.Now().After(deadline) {
			tb.Fatalf("etcd revision still moving after %s (at %d)", timeout, rev)
		}
		time.Sleep(quiet / 10)
		if r := revision(ctx, tb, cli); r != rev {
			rev, since = r, time.Now()
		}
	}
	return rev
}

// waitNodesReady waits until every agent's node key says Ready.
func waitNodesReady(ctx context.Context, tb testing.TB, cli *clientv3.Client, n int, timeout time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := cli.Get(rctx, cluster.DefaultNodesPrefix, clientv3.WithPrefix())
		cancel()
		ready := 0
		if err == nil {
			for _, kv := range resp.Kvs {
				var node v1.Node
				if json.Unmarshal(kv.Value, &node) != nil {
					continue
				}
				for _, c := range node.Status.Conditions {
					if c.Type == v1.NodeReady && c.Status == v1.ConditionTrue {
						ready++
					}
				}
			}
		}
		if ready == n {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d of %d nodes Ready after %s (err %v)", ready, n, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func heapInuse() uint64 {
	goruntime.GC()
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// simulate starts a three-member etcd and cfg.agents agents, applies
// cfg.pods pods to each through etcd, waits until every status key says
// Running, then watches an idle window. It stops every agent before it
// returns.
func simulate(tb testing.TB, cfg simConfig, timer func(on bool)) simResult {
	tb.Helper()
	testutil.EtcdBinary(tb) // skips under -short without etcd
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := testutil.StartEtcdCluster(tb, 3)
	eps := c.Endpoints()
	cli := c.Client()
	r := simResult{agents: cfg.agents, pods: cfg.agents * cfg.pods, steady: cfg.steady, revsByKind: map[string]int64{}}
	r.dbEmpty, _ = dbSize(ctx, tb, cli, eps)
	if cfg.baseline {
		r.baselineTook = baseline(ctx, tb, cfg)
	}

	ops := &opCounter{ops: map[string]int64{}}
	goroutines := goruntime.NumGoroutine()
	r.heapBefore = heapInuse()
	startAt := time.Now()
	root := tb.TempDir()
	agents := make([]*simAgent, cfg.agents)
	for i := range agents {
		node := nodeName(i)
		dir := filepath.Join(root, node)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		agents[i] = newSimAgent(ctx, tb, cfg, node, dir, eps, ops)
	}
	agentCtx, stopAgents := context.WithCancel(ctx)
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		stopAgents()
		for _, a := range agents {
			<-a.stopped
		}
	}
	defer stop()
	for _, a := range agents {
		go a.run(agentCtx)
	}
	waitNodesReady(ctx, tb, cli, cfg.agents, 2*time.Minute)
	r.startupTook = time.Since(startAt)
	rev0 := waitQuiet(ctx, tb, cli, cfg.quiet, 2*time.Minute)
	r.dbBefore, r.dbInUseBefore = dbSize(ctx, tb, cli, eps)
	ops.take()

	w := newWatcher(r.pods)
	wctx, stopWatch := context.WithCancel(ctx)
	watchDone := make(chan struct{})
	go func() { defer close(watchDone); w.run(wctx, cli, rev0+1) }()
	defer func() { stopWatch(); <-watchDone }() // on a failure; a second wait is immediate

	// Apply: pod j of the run goes to node j%agents, so every agent works
	// at once; each manifest with a plain put.
	timer(true)
	fsync0 := etcdFsyncs(ctx, tb, eps)
	applyStart := time.Now()
	r.applyTook = applyPods(ctx, tb, cli, cfg.agents, r.pods, w.markPut)

	select {
	case <-w.done:
	case <-time.After(cfg.timeout):
		w.mu.Lock()
		n, err := len(w.running), w.err
		w.mu.Unlock()
		tb.Fatalf("%d of %d status keys Running after %s (watch err %v)", n, r.pods, cfg.timeout, err)
	}
	timer(false)
	lat, last := w.latencies()
	r.allRunning = last.Sub(applyStart)
	r.p50, r.p90, r.p99, r.pmax = percentile(lat, 0.5), percentile(lat, 0.9), percentile(lat, 0.99), lat[len(lat)-1]
	started, published := w.startTimes(tb, agents)
	r.startP50, r.startP99 = percentile(started, 0.5), percentile(started, 0.99)
	r.publishP50, r.publishP99 = percentile(published, 0.5), percentile(published, 0.99)

	r.heapAfter = heapInuse()
	r.heapPerAgent = (float64(r.heapAfter) - float64(r.heapBefore)) / float64(cfg.agents)
	r.goroutinesAgents = goruntime.NumGoroutine() - goroutines

	quietStart := time.Now()
	rev1 := waitQuiet(ctx, tb, cli, cfg.quiet, 5*time.Minute)
	r.quietTook = time.Since(quietStart)
	r.revsApply = rev1 - rev0
	r.revsPerSec = float64(r.revsApply) / (r.allRunning + r.quietTook - cfg.quiet).Seconds()
	r.fsyncMean, r.fsyncs = fsyncDelta(fsync0, etcdFsyncs(ctx, tb, eps))
	r.dbAfter, r.dbInUseAfter = dbSize(ctx, tb, cli, eps)
	ops.take()

	// Nothing changes now: count what the agents still write.
	time.Sleep(cfg.steady)
	rev2 := revision(ctx, tb, cli)
	r.revsSteady = rev2 - rev1
	r.steadyOps = ops.take()

	// Wait for the watcher to catch up to rev2 before reading its counts.
	deadline := time.Now().Add(30 * time.Second)
	for {
		w.mu.Lock()
		caught := w.lastRev >= rev2
		w.mu.Unlock()
		if caught || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.mu.Lock()
	for k, v := range w.revs {
		r.revsByKind[k] = v
	}
	r.statusPuts = w.statuses
	w.mu.Unlock()
	stopWatch()
	<-watchDone
	for _, a := range agents {
		n := a.src.WatchEvents()
		r.watchEvents += n
		r.watchEventsMax = max(r.watchEventsMax, n)
		if a.sink != nil {
			r.eventsDropped += a.sink.Dropped()
		}
	}
	// Each agent's pods run on its own engine only.
	for _, a := range agents {
		ctrs, err := a.rt.ListContainers(ctx, map[string]string{runtime.LabelManaged: "true"})
		if err != nil {
			tb.Fatal(err)
		}
		for _, ct := range ctrs {
			i, err := strconv.Atoi(strings.TrimPrefix(ct.Labels[runtime.LabelPodName], "pod-"))
			if ct.Labels[runtime.LabelNode] != a.node || err != nil || i >= cfg.pods {
				r.wrongEngine++
				continue
			}
			if ct.Running() {
				r.perAgentRunning++
			}
		}
	}

	stop()
	// Every goroutine of the agents ends with them.
	deadline = time.Now().Add(10 * time.Second)
	for goruntime.NumGoroutine() > goroutines+2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := goruntime.NumGoroutine(); n > goroutines+2 {
		buf := make([]byte, 1<<20)
		buf = buf[:goruntime.Stack(buf, true)]
		tb.Errorf("%d goroutines after the agents stopped, %d before they started:\n%s", n, goroutines, buf)
	}
	return r
}

// table is the result as text.
func (r simResult) table() string {
	var b strings.Builder
	pods := float64(r.pods)
	perMin := float64(r.revsSteady) / pods / r.steady.Minutes()
	fmt.Fprintf(&b, "agents %d, pods %d (%d per agent), 3-member etcd\n", r.agents, r.pods, r.pods/r.agents)
	fmt.Fprintf(&b, "| measure | value |\n|---|---|\n")
	row := func(k, f string, a ...any) { fmt.Fprintf(&b, "| %s | "+f+" |\n", append([]any{k}, a...)...) }
	row("agents started, every node key Ready", "%s", r.startupTook.Round(time.Millisecond))
	row("apply (all puts, 8 writers)", "%s (%.0f puts/s)", r.applyTook.Round(time.Millisecond), pods/r.applyTook.Seconds())
	if r.baselineTook > 0 {
		row("same puts, fresh etcd, no agent", "%s (%.0f puts/s)", r.baselineTook.Round(time.Millisecond), pods/r.baselineTook.Seconds())
	}
	row("first put → every status key Running", "%s", r.allRunning.Round(time.Millisecond))
	row("pod put → status Running p50 / p90 / p99 / max", "%s / %s / %s / %s", r.p50.Round(time.Millisecond),
		r.p90.Round(time.Millisecond), r.p99.Round(time.Millisecond), r.pmax.Round(time.Millisecond))
	row("pod put → its containers running (start time) p50 / p99", "%s / %s", r.startP50.Round(time.Millisecond), r.startP99.Round(time.Millisecond))
	row("containers running → status key Running p50 / p99", "%s / %s", r.publishP50.Round(time.Millisecond), r.publishP99.Round(time.Millisecond))
	row("etcd revisions per pod (apply to quiet)", "%.2f (%d)", float64(r.revsApply)/pods, r.revsApply)
	row("  of which manifest puts / status txns / event puts / other", "%.2f / %.2f / %.2f / %.2f",
		float64(r.revsByKind["manifest"])/pods, float64(r.revsByKind["status"])/pods, float64(r.revsByKind["event"])/pods,
		float64(r.revsByKind["other"])/pods)
	row("etcd revisions/s, first put to quiet", "%.0f (member WAL fsync mean ≤ %s, %d fsyncs on 3 members)",
		r.revsPerSec, r.fsyncMean.Round(10*time.Microsecond), r.fsyncs)
	row("status key puts per pod", "%.2f", float64(r.statusPuts)/pods)
	row("last writes landed after all Running", "%s", r.quietTook.Round(time.Millisecond))
	row("etcd db size before → after (max of members)", "%.2f → %.2f MiB (in use %.2f → %.2f MiB; empty cluster %.2f MiB)",
		mib(r.dbBefore), mib(r.dbAfter), mib(r.dbInUseBefore), mib(r.dbInUseAfter), mib(r.dbEmpty))
	row("watch events per agent (etcd source), mean / max", "%.1f / %d", float64(r.watchEvents)/float64(r.agents), r.watchEventsMax)
	row("agent heap (HeapInuse delta / agents)", "%.2f MiB (%.0f → %.0f MiB total)", r.heapPerAgent/(1<<20),
		mib(int64(r.heapBefore)), mib(int64(r.heapAfter)))
	row("goroutines per agent", "%.1f", float64(r.goroutinesAgents)/float64(r.agents))
	row(fmt.Sprintf("steady: revisions in %s idle", r.steady), "%d (%.3f writes/pod/min)", r.revsSteady, perMin)
	var ops []string
	for _, k := range slices.Sorted(maps.Keys(r.steadyOps)) {
		ops = append(ops, fmt.Sprintf("%s %.2f", k, float64(r.steadyOps[k])/float64(r.agents)/r.steady.Minutes()))
	}
	if len(ops) == 0 {
		ops = []string{"none"}
	}
	row("steady: etcd requests per agent per minute", "%s", strings.Join(ops, ", "))
	row("events dropped (sink queue full)", "%d", r.eventsDropped)
	return b.String()
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// BenchmarkHundredAgents: 100 agents × 100 pods on one 3-member etcd, with
// the agent's production timings (status batches every 1 s, 40 s lease,
// 60 s resync, 30 s etcd check). ns/op is from the first put to the last
// status Running.
func BenchmarkHundredAgents(b *testing.B) {
	cfg := simConfig{
		agents:         envInt("BERTH_SIM_AGENTS", 100),
		pods:           envInt("BERTH_SIM_PODS", 100),
		steady:         envDuration("BERTH_SIM_STEADY", 60*time.Second),
		quiet:          3 * time.Second,
		resync:         60 * time.Second,
		check:          sources.DefaultEtcdCheckInterval,
		nodeCheck:      cluster.DefaultNodeCheck,
		statusInterval: cluster.DefaultStatusInterval,
		leaseTTL:       cluster.DefaultLeaseTTL,
		etcdEvents:     os.Getenv("BERTH_SIM_EVENTS") != "0",
		baseline:       os.Getenv("BERTH_SIM_BASELINE") != "0",
		timeout:        20 * time.Minute,
	}
	b.StopTimer()
	for range b.N {
		r := simulate(b, cfg, func(on bool) {
			if on {
				b.StartTimer()
			} else {
				b.StopTimer()
			}
		})
		pods := float64(r.pods)
		b.ReportMetric(r.allRunning.Seconds(), "s-all-running")
		b.ReportMetric(float64(r.p50.Milliseconds()), "p50-ms")
		b.ReportMetric(float64(r.p99.Milliseconds()), "p99-ms")
		b.ReportMetric(float64(r.publishP50.Milliseconds()), "publish-p50-ms")
		b.ReportMetric(float64(r.revsApply)/pods, "etcd-writes/pod")
		b.ReportMetric(float64(r.revsByKind["status"])/pods, "status-txns/pod")
		b.ReportMetric(float64(r.revsByKind["event"])/pods, "event-puts/pod")
		b.ReportMetric(mib(r.dbBefore), "db-before-MiB")
		b.ReportMetric(mib(r.dbAfter), "db-after-MiB")
		b.ReportMetric(float64(r.watchEvents)/float64(r.agents), "watch-events/agent")
		b.ReportMetric(r.heapPerAgent/(1<<20), "heap-MiB/agent")
		b.ReportMetric(float64(r.revsSteady)/pods/r.steady.Minutes(), "steady-writes/pod/min")
		if testing.Verbose() {
			b.Logf("\n%s", r.table())
		} else {
			// Without -v the testing package keeps only 10 lines of a
			// benchmark's log.
			fmt.Printf("%s\n%s\n", b.Name(), r.table())
		}
		if r.wrongEngine != 0 || r.perAgentRunning != 2*r.pods {
			b.Errorf("%d containers on a wrong engine, %d running of %d (sandbox and app of each pod)", r.wrongEngine, r.perAgentRunning, 2*r.pods)
		}
	}
}

// TestAgentsOnEtcdCluster is the small, always-run version: 3 agents × 5
// pods; every status key reaches Running, every agent's pods run on its own
// engine only, and a 3 s idle window (with resyncs, etcd checks and node
// checks every second) writes nothing.
func TestAgentsOnEtcdCluster(t *testing.T) {
	cfg := simConfig{agents: 3, pods: 5, steady: 3 * time.Second, quiet: time.Second,
		resync: time.Second, check: time.Second, nodeCheck: time.Second, statusInterval: 200 * time.Millisecond,
		leaseTTL: 6 * time.Second, etcdEvents: true, timeout: 20 * time.Second}
	start := time.Now()
	r := simulate(t, cfg, func(bool) {})
	t.Logf("\n%s", r.table())
	if r.wrongEngine != 0 {
		t.Errorf("%d containers on an engine not of their node", r.wrongEngine)
	}
	if want := 2 * r.pods; r.perAgentRunning != want {
		t.Errorf("%d containers running on their own engines, want %d (sandbox and app of each pod)", r.perAgentRunning, want)
	}
	if r.revsSteady != 0 {
		t.Errorf("the idle window moved the etcd revision by %d, want 0", r.revsSteady)
	}
	if r.revsByKind["manifest"] != int64(r.pods) {
		t.Errorf("%d manifest revisions seen, want %d", r.revsByKind["manifest"], r.pods)
	}
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}
