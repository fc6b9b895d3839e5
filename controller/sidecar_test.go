package controller

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/prober"
	"github.com/berth-dev/berth/runtime/fake"
)

// stopRecorder records the containers StopContainer was called for, in
// order, with their grace; the stop of hold's container waits for release.
type stopRecorder struct {
	*fake.Runtime
	mu      sync.Mutex
	stops   []string // container names
	graces  map[string]time.Duration
	hold    string
	release chan struct{}
}

func (r *stopRecorder) StopContainer(ctx context.Context, id string, grace time.Duration) error {
	ct, _ := r.Runtime.InspectContainer(ctx, id)
	if ct != nil && ct.Name == r.hold {
		<-r.release
	}
	r.mu.Lock()
	if ct != nil {
		r.stops = append(r.stops, ct.Name)
		r.graces[ct.Name] = grace
	}
	r.mu.Unlock()
	return r.Runtime.StopContainer(ctx, id, grace)
}

func (r *stopRecorder) stopped() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.stops)
}

// timerClock counts the timers made on its fake clock.
type timerClock struct {
	*clocktesting.FakeClock
	timers atomic.Int32
}

func (c *timerClock) NewTimer(d time.Duration) clock.Timer {
	defer c.timers.Add(1)
	return c.FakeClock.NewTimer(d)
}

// withStopRecorder is withProbes over a stopRecorder and a timerClock.
func withStopRecorder(t *testing.T) (*harness, *fakeProber, *stopRecorder, *timerClock) {
	h, fp, _ := withProbes(t)
	rec := &stopRecorder{Runtime: h.rt, graces: map[string]time.Duration{}, release: make(chan struct{})}
	clk := &timerClock{FakeClock: h.clock}
	cfg := h.ctrl.cfg
	cfg.Clock = clk
	h.ctrl = New(cfg, h.st, rec, nil)
	return h, fp, rec, clk
}

// sidecarPod has sidecars s1 (readiness probe) and s2 (startup probe), then
// the app.
func sidecarPod(policy v1.RestartPolicy) *v1.Pod {
	s1, s2 := sidecar("s1"), sidecar("s2")
	s1.ReadinessProbe, s2.StartupProbe = probe(), probe()
	p := testPod("sc", ctr("app", "app:1"))
	p.Spec.InitContainers = []v1.Container{s1, s2}
	p.Spec.RestartPolicy = policy
	return p
}

// Sidecars start in order, the app once the last one's startup probe
// passed; their statuses, the Initialized and Ready conditions count them
// as the kubelet does; a crashed sidecar restarts alone.
func TestSidecarsStartInOrderAndKeepRunning(t *testing.T) {
	h, fp, _ := withProbes(t)
	const key = "default/sc"
	h.put(sidecarPod(v1.RestartPolicyAlways))
	h.settle(key)
	run := h.running(key)
	if run["s1"] == nil || run["s2"] == nil || run["app"] != nil {
		t.Fatalf("before s2's startup probe passed: running %v, want s1 and s2 only", run)
	}
	if got := fp.synced[key]; len(got) != 2 || got[0].Spec.Name != "s1" || got[1].Spec.Name != "s2" {
		t.Fatalf("probed %+v, want the sidecars", got)
	}
	s := h.status(key)
	if s.Phase != v1.PodPending || !*s.InitContainerStatuses[0].Started || *s.InitContainerStatuses[1].Started ||
		condition(s, v1.PodInitialized).Status != v1.ConditionFalse {
		t.Fatalf("initializing: phase %s, init statuses %+v, conditions %+v", s.Phase, s.InitContainerStatuses, s.Conditions)
	}

	fp.set(run["s2"].ID, prober.Startup, prober.Success)
	h.settle(key)
	run = h.running(key)
	if run["app"] == nil || run["s1"] == nil || run["s2"] == nil {
		t.Fatalf("after the startup probe: running %v", run)
	}
	s = h.status(key)
	ready := condition(s, v1.PodReady)
	if s.Phase != v1.PodRunning || condition(s, v1.PodInitialized).Status != v1.ConditionTrue ||
		ready.Status != v1.ConditionFalse || ready.Message != "containers with unready status: [s1]" {
		t.Fatalf("running: phase %s, conditions %+v", s.Phase, s.Conditions)
	}
	fp.set(run["s1"].ID, prober.Readiness, prober.Success)
	h.settle(key)
	s = h.status(key)
	if !s.InitContainerStatuses[0].Ready || condition(s, v1.PodReady).Status != v1.ConditionTrue {
		t.Fatalf("s1 ready: init statuses %+v, conditions %+v", s.InitContainerStatuses, s.Conditions)
	}

	app := run["app"].ID
	h.exit(key, "s1", 1)
	h.settle(key)
	run = h.running(key)
	if run["s1"] == nil || run["app"].ID != app {
		t.Fatalf("after s1 crashed: running %v (app was %s)", run, app)
	}
	if s = h.status(key); s.InitContainerStatuses[0].RestartCount != 1 || s.Phase != v1.PodRunning {
		t.Fatalf("after s1's restart: phase %s, init statuses %+v", s.Phase, s.InitContainerStatuses)
	}
}

// A deleted pod stops its app container first, then its sidecars in
// reverse order, then the sandbox; a sidecar waits for its turn no longer
// than its grace period.
func TestSidecarsStopAfterTheApp(t *testing.T) {
	h, fp, rec, _ := withStopRecorder(t)
	const key = "default/sc"
	h.put(sidecarPod(v1.RestartPolicyAlways))
	h.settle(key)
	fp.set(h.running(key)["s2"].ID, prober.Startup, prober.Success)
	h.settle(key)
	close(rec.release)
	_ = h.st.DeletePod(key)
	h.settle(key)
	if got, want := rec.stopped(), []string{"app", "s2", "s1", "POD"}; !slices.Equal(got, want) {
		t.Fatalf("stop order %v, want %v", got, want)
	}

	// An app container that does not stop: the sidecars go once their
	// grace period (2 s) passed, with the kubelet's least grace left.
	h, fp, rec, clk := withStopRecorder(t)
	h.put(sidecarPod(v1.RestartPolicyAlways))
	h.settle(key)
	fp.set(h.running(key)["s2"].ID, prober.Startup, prober.Success)
	h.settle(key)
	rec.hold = "app"
	_ = h.st.DeletePod(key)
	if _, err := h.ctrl.Reconcile(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the sidecars' turn timers", 5*time.Second, func() bool { return clk.timers.Load() == 2 })
	if got := rec.stopped(); len(got) != 0 {
		t.Fatalf("stopped %v while the app still runs, before any grace period passed", got)
	}
	h.clock.Step(2 * time.Second)
	waitUntil(t, "the sidecars' stops", 5*time.Second, func() bool { return len(rec.stopped()) == 2 })
	rec.mu.Lock()
	graces := maps.Clone(rec.graces)
	rec.mu.Unlock()
	if graces["s1"] != model.MinGracePeriod || graces["s2"] != model.MinGracePeriod {
		t.Fatalf("graces %v, want %v each", graces, model.MinGracePeriod)
	}
	close(rec.release)
	h.waitIdle(key)
	if got := rec.stopped(); len(got) != 4 || got[2] != "app" || got[3] != "POD" {
		t.Fatalf("stops %v, want the sidecars, the app, the sandbox", got)
	}
}

// A Never pod whose app container completed is Succeeded once its sidecars
// are stopped, and Running until then.
func TestNeverPodCompletesBesideItsSidecars(t *testing.T) {
	h, fp, rec, _ := withStopRecorder(t)
	const key = "default/sc"
	h.put(sidecarPod(v1.RestartPolicyNever))
	h.settle(key)
	fp.set(h.running(key)["s2"].ID, prober.Startup, prober.Success)
	h.settle(key)
	rec.hold = "s2"
	h.exit(key, "app", 0)
	if _, err := h.ctrl.Reconcile(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if s := h.status(key); s.Phase != v1.PodRunning {
		t.Fatalf("phase %s while the sidecars still run, want Running", s.Phase)
	}
	close(rec.release)
	h.waitIdle(key)
	h.settle(key)
	if run := h.running(key); len(run) != 0 {
		t.Fatalf("still running %v", run)
	}
	s := h.status(key)
	if s.Phase != v1.PodSucceeded || s.InitContainerStatuses[0].State.Terminated == nil {
		t.Fatalf("phase %s, init statuses %+v", s.Phase, s.InitContainerStatuses)
	}
	if got := rec.stopped(); !slices.Equal(got, []string{"s2", "s1", "POD"}) {
		t.Fatalf("stops %v", got)
	}
}
