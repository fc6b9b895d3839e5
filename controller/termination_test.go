package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/runtime/fake"
)

// gatedRuntime holds every StopContainer until open is closed, and the
// RemoveContainer of containers named holdRemove until removes is; it
// counts the stops in flight and logs each call's start and end as
// "pod/container action".
type gatedRuntime struct {
	*fake.Runtime
	open, removes chan struct{}
	holdRemove    string

	mu       sync.Mutex
	names    map[string]string // ID -> pod/container
	log      []string
	inFlight int
	maxStops int
}

func newGatedRuntime(rt *fake.Runtime) *gatedRuntime {
	return &gatedRuntime{Runtime: rt, open: make(chan struct{}), removes: make(chan struct{}), names: map[string]string{}}
}

func (g *gatedRuntime) CreateContainer(ctx context.Context, cfg *runtime.ContainerConfig) (string, error) {
	id, err := g.Runtime.CreateContainer(ctx, cfg)
	if err == nil {
		l, _ := runtime.DecodeLabels(cfg.Labels)
		g.mu.Lock()
		g.names[id] = l.Pod + "/" + l.Container
		g.mu.Unlock()
	}
	return id, err
}

func (g *gatedRuntime) note(id, action string, stops int) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight += stops
	g.maxStops = max(g.maxStops, g.inFlight)
	name := g.names[id]
	g.log = append(g.log, name+" "+action)
	return name
}

func (g *gatedRuntime) StopContainer(ctx context.Context, id string, grace time.Duration) error {
	g.note(id, "stop", 1)
	defer g.note(id, "stopped", -1)
	select {
	case <-g.open:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Runtime.StopContainer(ctx, id, grace)
}

func (g *gatedRuntime) RemoveContainer(ctx context.Context, id string) error {
	name := g.note(id, "remove", 0)
	defer g.note(id, "removed", 0)
	if g.holdRemove != "" && strings.HasSuffix(name, "/"+g.holdRemove) {
		select {
		case <-g.removes:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return g.Runtime.RemoveContainer(ctx, id)
}

func (g *gatedRuntime) stopsInFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inFlight
}

// logged reports whether the log has entry.
func (g *gatedRuntime) logged(entry string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Contains(g.log, entry)
}

// index is where entry is in the log, or -1.
func (g *gatedRuntime) index(entry string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Index(g.log, entry)
}

// withGatedRuntime is a harness over a gatedRuntime whose controller lets
// at most maxStops pods stop at once.
func withGatedRuntime(t *testing.T, maxStops int) (*harness, *gatedRuntime) {
	h := newHarness(t)
	g := newGatedRuntime(h.rt)
	cfg := h.ctrl.cfg
	cfg.MaxParallelStops = maxStops
	h.ctrl = New(cfg, h.st, g, nil)
	return h, g
}

// startPods runs n one-container pods p0..p<n-1> and returns their keys.
func startPods(h *harness, n int) []string {
	var keys []string
	for i := range n {
		name := fmt.Sprintf("p%d", i)
		h.put(testPod(name, ctr("app", "app:1")))
		keys = append(keys, "default/"+name)
		h.settle(keys[i])
	}
	return keys
}

// deleteAll removes the pods from the store and reconciles each once,
// which starts their stops in the background.
func deleteAll(t *testing.T, h *harness, ctx context.Context, keys []string) {
	t.Helper()
	for _, k := range keys {
		if err := h.st.DeletePod(k); err != nil {
			t.Fatal(err)
		}
		if _, err := h.ctrl.Reconcile(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
}

// Pods deleted at once stop side by side, never more than
// MaxParallelStops at a time; each stops its app before its sandbox, and
// removes each container once stopped.
func TestStopsOfDeletedPodsOverlapBounded(t *testing.T) {
	const n, bound = 7, 3
	h, g := withGatedRuntime(t, bound)
	keys := startPods(h, n)
	deleteAll(t, h, context.Background(), keys)
	waitUntil(t, "the bound's worth of stops", 5*time.Second, func() bool { return g.stopsInFlight() == bound })
	close(g.open)
	for _, k := range keys {
		h.waitIdle(k)
	}
	if g.maxStops != bound {
		t.Errorf("at most %d stops at once, want %d (the bound)", g.maxStops, bound)
	}
	for i, k := range keys {
		if run := h.running(k); len(run) != 0 {
			t.Errorf("%s still runs %v", k, run)
		}
		p := fmt.Sprintf("p%d/", i)
		appStopped, sbStop := g.index(p+"app stopped"), g.index(p+model.SandboxName+" stop")
		if appStopped < 0 || sbStop < appStopped {
			t.Errorf("%s: the sandbox's stop at %d, the app's end at %d of %v", k, sbStop, appStopped, g.log)
		}
		for _, name := range []string{"app", model.SandboxName} {
			if r, s := g.index(p+name+" remove"), g.index(p+name+" stopped"); r < s {
				t.Errorf("%s: %s removed at %d, before its stop ended at %d", k, name, r, s)
			}
		}
	}
}

// The app's removal is no part of the termination order: the sandbox's
// stop starts while it runs.
func TestSandboxStopOverlapsAppRemoval(t *testing.T) {
	h, g := withGatedRuntime(t, 0)
	keys := startPods(h, 1)
	g.holdRemove = "app"
	close(g.open) // stops pass; the app's removal waits
	deleteAll(t, h, context.Background(), keys)
	waitUntil(t, "the sandbox's stop beside the app's removal", 5*time.Second, func() bool {
		return g.logged("p0/" + model.SandboxName + " stopped")
	})
	if g.logged("p0/app removed") {
		t.Fatal("the app's removal ended before the sandbox's stop was waited for")
	}
	close(g.removes)
	h.waitIdle(keys[0])
	if run := h.running(keys[0]); len(run) != 0 {
		t.Fatalf("still running %v", run)
	}
}

// A deleted pod costs the engine one stop and one removal per container:
// no inspect, no container list, and one volume list for all pods (the
// engine volumes berth did not make itself).
func TestTeardownCallsAreMinimal(t *testing.T) {
	const n = 5
	h := newHarness(t)
	keys := startPods(h, n)
	before := map[string]int{}
	methods := []string{"StopContainer", "RemoveContainer", "InspectContainer", "ListContainers", "ListVolumes"}
	for _, m := range methods {
		before[m] = h.rt.CallCount(m)
	}
	for _, k := range keys {
		if err := h.st.DeletePod(k); err != nil {
			t.Fatal(err)
		}
		h.settle(k)
	}
	want := map[string]int{"StopContainer": 2 * n, "RemoveContainer": 2 * n, "InspectContainer": 0, "ListContainers": 0, "ListVolumes": 1}
	for _, m := range methods {
		if got := h.rt.CallCount(m) - before[m]; got != want[m] {
			t.Errorf("%s called %d times for %d deleted pods, want %d", m, got, n, want[m])
		}
	}
}

// A Memory emptyDir made before berth restarted still goes with its pod:
// the volumes the engine has are listed once.
func TestMemoryVolumeOfAnEarlierBerthGoes(t *testing.T) {
	h := newHarness(t)
	p := testPod("web", ctr("a", "app:1"))
	p.Spec.Volumes = []v1.Volume{{Name: "shm", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}}}
	p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "shm", MountPath: "/shm"}}
	h.put(p)
	h.settle("default/web")
	if len(h.rt.Volumes()) != 1 {
		t.Fatalf("volumes %v, want the pod's shm", h.rt.Volumes())
	}
	h.ctrl = New(h.ctrl.cfg, h.st, h.rt, nil) // berth restarted
	if err := h.st.DeletePod("default/web"); err != nil {
		t.Fatal(err)
	}
	h.settle("default/web")
	if vols := h.rt.Volumes(); len(vols) != 0 {
		t.Fatalf("volumes left: %v", vols)
	}
}

// A pod put back while its stop runs starts again once the stop ended,
// with its Memory emptyDir.
func TestPodRecreatedDuringItsStop(t *testing.T) {
	h, g := withGatedRuntime(t, 0)
	p := testPod("web", ctr("app", "app:1"))
	p.Spec.Volumes = []v1.Volume{{Name: "shm", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}}}
	p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "shm", MountPath: "/shm"}}
	const key = "default/web"
	h.put(p)
	h.settle(key)
	old := h.running(key)["app"].ID
	deleteAll(t, h, context.Background(), []string{key})
	waitUntil(t, "the app's stop", 5*time.Second, func() bool { return g.stopsInFlight() == 1 })
	h.put(p)
	if _, err := h.ctrl.Reconcile(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	close(g.open)
	h.waitIdle(key)
	h.settle(key)
	run := h.running(key)
	if run["app"] == nil || run["app"].ID == old || run[model.SandboxName] == nil {
		t.Fatalf("after the stop: running %v (the old app was %s)", run, old)
	}
	if vols := h.rt.Volumes(); len(vols) != 1 {
		t.Fatalf("volumes %v, want the pod's shm", vols)
	}
}

// A pod waiting for a stop slot gives up when its context ends, and so
// does a stop in progress.
func TestStopSlotWaitIsCancellable(t *testing.T) {
	h, g := withGatedRuntime(t, 1)
	keys := startPods(h, 2)
	held, cancelHeld := context.WithCancel(context.Background())
	defer cancelHeld()
	deleteAll(t, h, held, keys[:1])
	waitUntil(t, "the first pod's stop", 5*time.Second, func() bool { return g.stopsInFlight() == 1 })
	waiting, cancelWaiting := context.WithCancel(context.Background())
	deleteAll(t, h, waiting, keys[1:])
	cancelWaiting()
	h.waitIdle(keys[1])
	if g.logged("p1/app stop") {
		t.Fatal("the second pod stopped beside the first, past the bound of 1")
	}
	cancelHeld()
	h.waitIdle(keys[0])
}

// A pod whose stop outlasts stopSlotHold (its process takes its grace
// period) gives its slot to the next pod.
func TestSlowStopFreesItsSlot(t *testing.T) {
	h, g := withGatedRuntime(t, 1)
	keys := startPods(h, 2)
	deleteAll(t, h, context.Background(), keys[:1])
	waitUntil(t, "the first pod's stop", 5*time.Second, func() bool { return g.stopsInFlight() == 1 })
	deleteAll(t, h, context.Background(), keys[1:])
	if g.logged("p1/app stop") {
		t.Fatal("the second pod stopped at once, past the bound of 1")
	}
	h.clock.Step(stopSlotHold)
	waitUntil(t, "the second pod's stop beside the slow one", 5*time.Second, func() bool { return g.stopsInFlight() == 2 })
	close(g.open)
	for _, k := range keys {
		h.waitIdle(k)
	}
}
