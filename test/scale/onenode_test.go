package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	clientv3 "go.etcd.io/etcd/client/v3"
	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/cluster"
	"github.com/berth-dev/berth/internal/testutil"
)

// processCPU is the CPU time (user and system) this process has used.
func processCPU(tb testing.TB) time.Duration {
	u, s := processCPUSplit(tb)
	return u + s
}

// processCPUSplit is processCPU's user and system times.
func processCPUSplit(tb testing.TB) (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// runningWatch follows one node's status keys and records when each pod's
// key first says Running.
type runningWatch struct {
	mu      sync.Mutex
	running map[string]time.Time // pod name -> first Running seen
	changed chan struct{}        // closed and replaced at each new Running
}

func (w *runningWatch) run(ctx context.Context, cli *clientv3.Client, prefix string, fromRev int64) {
	for wr := range cli.Watch(clientv3.WithRequireLeader(ctx), prefix, clientv3.WithPrefix(), clientv3.WithRev(fromRev)) {
		now := time.Now()
		for _, ev := range wr.Events {
			if ev.Type != clientv3.EventTypePut {
				continue
			}
			var s struct {
				Phase v1.PodPhase `json:"phase"`
			}
			name := string(ev.Kv.Key[strings.LastIndexByte(string(ev.Kv.Key), '/')+1:])
			w.mu.Lock()
			if _, seen := w.running[name]; !seen && json.Unmarshal(ev.Kv.Value, &s) == nil && s.Phase == v1.PodRunning {
				w.running[name] = now
				close(w.changed)
				w.changed = make(chan struct{})
			}
			w.mu.Unlock()
		}
	}
}

// wait waits until pod name's status key said Running.
func (w *runningWatch) wait(ctx context.Context, tb testing.TB, name string) time.Time {
	tb.Helper()
	timeout := time.After(time.Minute)
	for {
		w.mu.Lock()
		t, ok := w.running[name]
		ch := w.changed
		w.mu.Unlock()
		if ok {
			return t
		}
		select {
		case <-ch:
		case <-timeout:
			tb.Fatalf("status key of %s not Running after 1 minute", name)
		case <-ctx.Done():
			tb.Fatal(ctx.Err())
		}
	}
}

// waitStoreRunning waits until the agent's store has pod key Running and
// returns the time all its containers first ran (the pod's StartedAt).
func waitStoreRunning(ctx context.Context, tb testing.TB, a *simAgent, key string) time.Time {
	tb.Helper()
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		ws := memdb.NewWatchSet()
		p, err := a.st.Pod(ws, key)
		if err != nil {
			tb.Fatal(err)
		}
		if p != nil && p.Status.Phase == v1.PodRunning {
			return p.StartedAt
		}
		if err := ws.WatchCtx(wctx); err != nil {
			tb.Fatalf("pod %s not Running in the agent after 1 minute (%v)", key, err)
		}
	}
}

// rootDir is the agent's root_dir: under BERTH_SIM_ROOT when set (e.g. a
// tmpfs, away from a shared disk), else a test temp dir.
func rootDir(tb testing.TB) string {
	base := os.Getenv("BERTH_SIM_ROOT")
	if base == "" {
		return tb.TempDir()
	}
	dir, err := os.MkdirTemp(base, "berth-linear-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func sysCPU(tb testing.TB) time.Duration {
	_, s := processCPUSplit(tb)
	return s
}

// linearResult is what one run of the one-node benchmark measured.
type linearResult struct {
	pods, window         int
	first, last          time.Duration   // process CPU per put in the first and last window
	windows              []time.Duration // process CPU per put in every window, in order
	sysWindows           []time.Duration // of which system time
	firstWall, lastWall  time.Duration   // wall time per put in the same windows
	startP50, statusP50  time.Duration   // put → all containers ran; put → status key Running
	publishP50           time.Duration   // status key Running − the pod's StartedAt, p50
	publishP99           time.Duration
	revisions, revsEvent int64
}

// oneNodeLinear starts one agent on a one-member etcd and puts pods pods
// to it one at a time, each once the previous one runs in the agent's
// store; it measures the process's CPU over every window of puts, each
// window ending when its last pod's status key says Running and its
// garbage is collected (a forced GC counted in it; another before it, not
// counted, so no window pays for the one before).
func oneNodeLinear(tb testing.TB, pods, window int, cfg simConfig) linearResult {
	tb.Helper()
	testutil.EtcdBinary(tb)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := testutil.StartEtcdCluster(tb, 1)
	cli := c.Client()
	node := nodeName(0)
	a := newSimAgent(ctx, tb, cfg, node, rootDir(tb), c.Endpoints(), nil)
	actx, stop := context.WithCancel(ctx)
	defer func() { stop(); <-a.stopped }()
	go a.run(actx)
	waitNodesReady(ctx, tb, cli, 1, time.Minute)
	rev0 := waitQuiet(ctx, tb, cli, cfg.quiet, time.Minute)

	w := &runningWatch{running: map[string]time.Time{}, changed: make(chan struct{})}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go w.run(wctx, cli, cluster.StatusPrefix(node), rev0+1)

	r := linearResult{pods: pods, window: window}
	put := make([]time.Time, pods)
	started := make([]time.Time, pods)
	var cpu0, sys0 time.Duration
	var wall0 time.Time
	for i := range pods {
		if i%window == 0 {
			// The garbage of what came before is not the window's.
			goruntime.GC()
			cpu0, wall0 = processCPU(tb), time.Now()
			sys0 = sysCPU(tb)
		}
		key := cluster.PodKey(cluster.PodsPrefix(node), "default", podName(i))
		put[i] = time.Now()
		pctx, pcancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := cli.Put(pctx, key, podManifest(podName(i), baseHostPort+i))
		pcancel()
		if err != nil {
			tb.Fatalf("put %s: %v", key, err)
		}
		started[i] = waitStoreRunning(ctx, tb, a, "default/"+podName(i))
		if (i+1)%window == 0 {
			// The window ends when its last status is in etcd.
			w.wait(ctx, tb, podName(i))
			cpu, wall := (processCPU(tb)-cpu0)/time.Duration(window), time.Since(wall0)/time.Duration(window)
			r.windows = append(r.windows, cpu)
			r.sysWindows = append(r.sysWindows, (sysCPU(tb)-sys0)/time.Duration(window))
			if i == window-1 {
				r.first, r.firstWall = cpu, wall
			}
			r.last, r.lastWall = cpu, wall
		}
	}
	var start, status, publish []time.Duration
	for i := range pods {
		ran := w.wait(ctx, tb, podName(i))
		start = append(start, started[i].Sub(put[i]))
		status = append(status, ran.Sub(put[i]))
		publish = append(publish, ran.Sub(started[i]))
	}
	for _, d := range [][]time.Duration{start, status, publish} {
		slices.Sort(d)
	}
	r.startP50, r.statusP50 = percentile(start, 0.5), percentile(status, 0.5)
	r.publishP50, r.publishP99 = percentile(publish, 0.5), percentile(publish, 0.99)
	rev1 := waitQuiet(ctx, tb, cli, cfg.quiet, time.Minute)
	r.revisions = rev1 - rev0
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	if resp, err := cli.Get(rctx, "/events/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err == nil {
		r.revsEvent = resp.Count
	}
	return r
}

// BenchmarkOneNodeLinear: 1,000 pods put one by one on one node through
// etcd (one member, its own process, so its CPU is not counted). The
// measure is this process's CPU (getrusage: the agent, the one putting
// client and the status watcher, both constant per put) per put over the
// first and the last 100 puts; the goal is a ratio ≤ 1.2. Periodic work
// that does not come from a put (controller resync, the source's etcd
// check) is set to an hour, so it stays out of both windows; the node
// check keeps its 5 s. BERTH_LINEAR_PODS and BERTH_LINEAR_WINDOW resize it.
func BenchmarkOneNodeLinear(b *testing.B) {
	pods, window := envInt("BERTH_LINEAR_PODS", 1000), envInt("BERTH_LINEAR_WINDOW", 100)
	if window > pods/2 {
		b.Fatalf("window %d must be at most half of %d pods", window, pods)
	}
	cfg := simConfig{
		quiet:          time.Second,
		resync:         time.Hour,
		check:          time.Hour,
		nodeCheck:      cluster.DefaultNodeCheck,
		statusInterval: cluster.DefaultStatusInterval,
		leaseTTL:       cluster.DefaultLeaseTTL,
		etcdEvents:     os.Getenv("BERTH_SIM_EVENTS") != "0",
		nodeScale:      int64(pods/400 + 1),
	}
	for range b.N {
		r := oneNodeLinear(b, pods, window, cfg)
		ratio := float64(r.last) / float64(r.first)
		b.ReportMetric(float64(r.first.Microseconds())/1000, "cpu-ms/put-first")
		b.ReportMetric(float64(r.last.Microseconds())/1000, "cpu-ms/put-last")
		b.ReportMetric(ratio, "last/first")
		b.ReportMetric(float64(r.publishP50.Microseconds())/1000, "publish-p50-ms")
		b.ReportMetric(float64(r.revisions)/float64(pods), "etcd-writes/pod")
		fmt.Printf("%s: %d pods one by one on one node; per put over puts 1–%d vs %d–%d: CPU %s vs %s (ratio %.2f), wall %s vs %s\n",
			b.Name(), pods, window, pods-window+1, pods, r.first, r.last, ratio, r.firstWall, r.lastWall)
		var ws, ss []string
		for i, c := range r.windows {
			ws = append(ws, fmt.Sprintf("%.2f", float64(c.Microseconds())/1000))
			ss = append(ss, fmt.Sprintf("%.2f", float64(r.sysWindows[i].Microseconds())/1000))
		}
		fmt.Printf("%s: CPU ms per put in each window of %d: %s (of which system: %s)\n", b.Name(), window, strings.Join(ws, " "), strings.Join(ss, " "))
		fmt.Printf("%s: p50 put → pod started %s, put → status key Running %s; status Running − started p50 %s, p99 %s; etcd revisions per pod %.2f (events %d)\n",
			b.Name(), r.startP50.Round(100*time.Microsecond), r.statusP50.Round(100*time.Microsecond),
			r.publishP50.Round(100*time.Microsecond), r.publishP99.Round(100*time.Microsecond), float64(r.revisions)/float64(pods), r.revsEvent)
	}
}
