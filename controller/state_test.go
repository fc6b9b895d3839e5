package controller

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berth-dev/berth/runtime/fake"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/informer"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

// live is berth's loop on the fake engine: the Docker informer feeding the
// store, the store notifying the controller, its workers running.
type live struct {
	*harness
	// metrics counts the reconciles the workers finished.
	metrics *outcomeMetrics
	cancel  context.CancelFunc
	done    chan struct{}
}

func newLive(t *testing.T, workers int) *live {
	t.Helper()
	h := newHarness(t)
	cfg := h.ctrl.cfg
	cfg.Workers, cfg.Clock, cfg.Resync = workers, clock.RealClock{}, 0
	m := &outcomeMetrics{}
	cfg.Metrics = m
	h.rt = fake.New(nil)
	h.rt.AddImage("app:1")
	h.rt.AddImage("app:2")
	q := NewQueue(cfg.Clock, nil)
	st, _ := store.New(q.Add)
	_ = st.UpsertSource(&model.Source{Name: "file", Synced: true})
	h.st = st
	h.ctrl = New(cfg, st, h.rt, q)
	ctx, cancel := context.WithCancel(context.Background())
	l := &live{harness: h, metrics: m, cancel: cancel, done: make(chan struct{})}
	inf := informer.NewDockerInformer(h.rt, st, "n1", nil, nil, nil)
	go inf.Run(ctx)
	waitUntil(t, "docker informer synced", 5*time.Second, inf.Synced)
	go func() {
		defer close(l.done)
		h.ctrl.Run(ctx)
	}()
	t.Cleanup(l.stop)
	return l
}

func (l *live) stop() {
	l.cancel()
	<-l.done
}

func waitUntil(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// Defect 1 of the state model: an inspect that the engine answered with
// "running" arrives after the informer applied the container's death. Before
// the store ordered its writers the stale answer won, the store said running
// through every resync, and the container was never restarted.
func TestStaleInspectDoesNotHideAnExit(t *testing.T) {
	l := newLive(t, 2)
	l.put(testPod("web", ctr("a", "app:1")))
	waitUntil(t, "pod running", 5*time.Second, func() bool { return l.running("default/web")["a"] != nil })
	a := l.running("default/web")["a"]
	// The store must hold the running row first: a stale answer about a
	// container the store has never seen is the only news and is written.
	waitUntil(t, "store saw the start", 5*time.Second, func() bool {
		c, _ := l.st.Container(nil, a.ID)
		return c != nil && c.State == model.StateRunning
	})

	// Only this test's own inspect is overtaken; the workers' inspects of
	// the same container pass untouched (they must not block on it).
	type mine struct{}
	ctx := context.WithValue(context.Background(), mine{}, true)
	l.rt.InspectHook = func(ctx context.Context, id string) {
		if id != a.ID || ctx.Value(mine{}) == nil {
			return
		}
		// The inspect took its snapshot (running); before its answer
		// arrives, the container dies and the informer records it.
		l.rt.Exit(a.ID, 1)
		waitUntil(t, "informer saw the death", 5*time.Second, func() bool {
			c, _ := l.st.Container(nil, a.ID)
			return c == nil || c.State == model.StateExited
		})
	}
	l.ctrl.obs.refresh(ctx, a.ID)
	if c, _ := l.st.Container(nil, a.ID); c != nil && c.State == model.StateRunning {
		t.Fatal("the older inspect overwrote the newer exit: the store says running")
	}
	waitUntil(t, "restart of the dead container", 5*time.Second, func() bool {
		r := l.running("default/web")["a"]
		return r != nil && r.ID != a.ID
	})
}

// Defect 2: the termination's wakeup was sent before its busy mark was
// cleared, so a worker taking the key at once saw "busy", dropped it, and the
// pod re-added meanwhile waited for the next resync. The wakeup must find the
// pod no longer busy.
func TestTerminationWakeupFindsPodIdle(t *testing.T) {
	var ops *podOps
	var stale atomic.Int32
	woke := make(chan string, 1)
	ops = newPodOps(func(key string) {
		if ops.busy(key) {
			stale.Add(1)
		}
		woke <- key
	}, newHarness(t).ctrl.log)
	release := make(chan struct{})
	if !ops.start(context.Background(), "default/web", func(context.Context) { <-release }) {
		t.Fatal("operation not started")
	}
	if ops.start(context.Background(), "default/web", func(context.Context) {}) {
		t.Fatal("a second operation started for a busy pod")
	}
	idle := ops.idle("default/web")
	select {
	case <-idle:
		t.Fatal("idle while the operation runs")
	default:
	}
	close(release)
	select {
	case <-idle:
	case <-time.After(5 * time.Second):
		t.Fatal("idle not signalled once the operation ended")
	}
	select {
	case k := <-woke: // enqueued before idle was signalled
		if k != "default/web" {
			t.Fatalf("woke %q", k)
		}
	default:
		t.Fatal("idle signalled before the key was enqueued")
	}
	select {
	case <-ops.idle("default/web"):
	default:
		t.Fatal("a key with no operation is not idle")
	}
	if stale.Load() != 0 {
		t.Fatal("the wakeup was delivered while the pod was still marked busy")
	}
}

// The same on the whole loop: a pod deleted, then re-added while its old
// instance still terminates, runs again without any resync (it is off).
func TestPodReaddedDuringTerminationRunsAgain(t *testing.T) {
	l := newLive(t, 4)
	l.put(testPod("web", ctr("a", "app:1")))
	waitUntil(t, "pod running", 5*time.Second, func() bool { return l.running("default/web")["a"] != nil })
	old := l.running("default/web")["a"]

	block := make(chan struct{})
	l.rt.StopBlock = block
	_ = l.st.DeletePod("default/web")
	waitUntil(t, "termination under way", 5*time.Second, func() bool { return l.ctrl.ops.busy("default/web") })
	p := testPod("web", ctr("a", "app:1"))
	p.UID = "01234567-89ab-cdef-0000-readded"
	before := l.metrics.total()
	l.put(p)
	waitUntil(t, "a reconcile of the busy pod", 5*time.Second, func() bool {
		return l.metrics.total() > before && l.ctrl.queue.Len() == 0
	})
	close(block)
	waitUntil(t, "re-added pod running", 5*time.Second, func() bool {
		r := l.running("default/web")["a"]
		return r != nil && r.ID != old.ID && r.PodUID == string(p.UID)
	})
}

// No worker waits for a container to stop: 8 pods edited at once, each
// stopping with a 30 s grace period, leave the 4 workers free, and a ninth
// pod starts within a second.
func TestSlowStopsDoNotHoldWorkers(t *testing.T) {
	l := newLive(t, 4)
	grace := int64(30)
	pods := make([]*v1.Pod, 8)
	for i := range pods {
		pods[i] = testPod(fmt.Sprintf("p%d", i), ctr("a", "app:1", "V=1"))
		pods[i].Spec.TerminationGracePeriodSeconds = &grace
		l.put(pods[i])
	}
	for i := range pods {
		key := "default/" + pods[i].Name
		waitUntil(t, key+" running", 5*time.Second, func() bool { return l.running(key)["a"] != nil })
	}
	block := make(chan struct{})
	l.rt.StopBlock = block // every stop takes its whole grace period
	defer close(block)
	for i := range pods {
		p := pods[i].DeepCopy()
		p.Spec.Containers[0].Env[0].Value = "2"
		l.put(p)
	}
	waitUntil(t, "all 8 stops under way", 5*time.Second, func() bool {
		n := 0
		for i := range pods {
			if l.ctrl.ops.busy("default/" + pods[i].Name) {
				n++
			}
		}
		return n == 8
	})
	start := time.Now()
	l.put(testPod("ninth", ctr("a", "app:1")))
	waitUntil(t, "ninth pod running", time.Second, func() bool { return l.running("default/ninth")["a"] != nil })
	t.Logf("ninth pod running %v after it was declared, with 8 stops in progress", time.Since(start).Round(time.Millisecond))
}

// panicky fails the plan's first engine call with a panic.
type panicky struct {
	*fake.Runtime
	armed atomic.Bool
}

func (p *panicky) CreateContainer(ctx context.Context, cfg *runtime.ContainerConfig) (string, error) {
	if p.armed.CompareAndSwap(true, false) {
		panic("boom")
	}
	return p.Runtime.CreateContainer(ctx, cfg)
}

// A panic in one pod's reconcile is counted, logged and retried; berth and
// the other pods go on.
func TestPanicInReconcileIsRecovered(t *testing.T) {
	h := newHarness(t)
	rt := &panicky{Runtime: h.rt}
	rt.armed.Store(true)
	m := &outcomeMetrics{}
	cfg := h.ctrl.cfg
	cfg.Metrics = m
	h.ctrl = New(cfg, h.st, rt, nil)
	h.put(testPod("web", ctr("a", "app:1")))
	h.ctrl.Enqueue("default/web")
	if !h.ctrl.processNextWorkItem(context.Background()) {
		t.Fatal("queue shut down")
	}
	if got := m.get(ResultPanic); got != 1 {
		t.Fatalf("%d reconciles counted as panic, want 1", got)
	}
	h.clock.Step(time.Second) // past the rate limiter
	waitUntil(t, "retry queued", 5*time.Second, func() bool { return h.ctrl.queue.Len() == 1 })
	if !h.ctrl.processNextWorkItem(context.Background()) {
		t.Fatal("queue shut down")
	}
	if m.get(ResultSuccess) != 1 || h.running("default/web")["POD"] == nil {
		t.Fatalf("retry after the panic: outcomes %v", m.outcomes)
	}
}

type outcomeMetrics struct {
	noMetrics
	mu       sync.Mutex
	outcomes map[string]int
}

func (m *outcomeMetrics) ReconcileDone(result string, _ time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.outcomes == nil {
		m.outcomes = map[string]int{}
	}
	m.outcomes[result]++
}

func (m *outcomeMetrics) total() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.outcomes {
		n += c
	}
	return n
}

func (m *outcomeMetrics) get(result string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.outcomes[result]
}
