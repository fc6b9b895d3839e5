package controller

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/runtime/fake"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/prober"
)

type fakeProber struct {
	mu      sync.Mutex
	results map[string]map[prober.Kind]prober.Result
	synced  map[string][]prober.Probed
}

func newFakeProber() *fakeProber {
	return &fakeProber{results: map[string]map[prober.Kind]prober.Result{}, synced: map[string][]prober.Probed{}}
}

func (f *fakeProber) Sync(key string, cs []prober.Probed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.synced[key] = cs
}

func (f *fakeProber) Result(id string, k prober.Kind) prober.Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.results[id][k]
}

func (f *fakeProber) set(id string, k prober.Kind, r prober.Result) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.results[id] == nil {
		f.results[id] = map[prober.Kind]prober.Result{}
	}
	f.results[id][k] = r
}

type hookCall struct {
	id      string
	running bool
	cmd     []string
}

type fakeHooks struct {
	h     *harness
	calls []hookCall
	fail  bool
}

func (f *fakeHooks) Run(ctx context.Context, hd prober.Handler, t prober.Target, timeout time.Duration) error {
	c, _ := f.h.rt.InspectContainer(ctx, t.ContainerID)
	f.calls = append(f.calls, hookCall{id: t.ContainerID, running: c != nil && c.Running(), cmd: hd.Exec.Command})
	if f.fail {
		return errors.New("hook failed")
	}
	return nil
}

func withProbes(t *testing.T) (*harness, *fakeProber, *fakeHooks) {
	h := newHarness(t)
	fp := newFakeProber()
	fh := &fakeHooks{h: h}
	cfg := h.ctrl.cfg
	cfg.Prober, cfg.Hooks = fp, fh
	h.ctrl = New(cfg, h.st, h.rt, nil)
	return h, fp, fh
}

func probe() *v1.Probe {
	return &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
		PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 3, SuccessThreshold: 1}
}

func TestLivenessFailureRestartsContainer(t *testing.T) {
	h, fp, _ := withProbes(t)
	c := ctr("a", "app:1")
	c.LivenessProbe = probe()
	h.put(testPod("web", c))
	h.settle("default/web")
	a := h.running("default/web")["a"]
	if got := fp.synced["default/web"]; len(got) != 1 || got[0].ContainerID != a.ID || got[0].Spec.LivenessProbe == nil {
		t.Fatalf("prober synced %+v", got)
	}
	fp.set(a.ID, prober.Liveness, prober.Failure)
	h.settle("default/web")
	b := h.running("default/web")["a"]
	if b == nil || b.ID == a.ID || b.RestartCount != 1 {
		t.Fatalf("unhealthy container not restarted: %+v", b)
	}
	if got := fp.synced["default/web"]; len(got) != 1 || got[0].ContainerID != b.ID {
		t.Fatalf("prober not moved to the new container: %+v", got)
	}
}

func TestReadinessDrivesReady(t *testing.T) {
	h, fp, _ := withProbes(t)
	c := ctr("a", "app:1")
	c.ReadinessProbe = probe()
	h.put(testPod("web", c))
	h.settle("default/web")
	p, _ := h.st.Pod(nil, "default/web")
	if p.Status.ContainerStatuses[0].Ready || condition(p.Status, v1.PodReady).Status != v1.ConditionFalse {
		t.Fatal("ready before the readiness probe succeeded")
	}
	fp.set(h.running("default/web")["a"].ID, prober.Readiness, prober.Success)
	h.reconcile("default/web")
	p, _ = h.st.Pod(nil, "default/web")
	if !p.Status.ContainerStatuses[0].Ready || condition(p.Status, v1.PodReady).Status != v1.ConditionTrue {
		t.Fatalf("not ready after success: %+v", p.Status.Conditions)
	}
}

func TestPreStopRunsBeforeStop(t *testing.T) {
	h, _, fh := withProbes(t)
	c := ctr("a", "app:1")
	c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"/bin/drain"}}}}
	h.put(testPod("web", c))
	h.settle("default/web")
	id := h.running("default/web")["a"].ID
	_ = h.st.DeletePod("default/web")
	h.settle("default/web")
	if len(fh.calls) != 1 || fh.calls[0].id != id || !fh.calls[0].running || fh.calls[0].cmd[0] != "/bin/drain" {
		t.Fatalf("preStop calls %+v", fh.calls)
	}
	if len(h.running("default/web")) != 0 {
		t.Fatal("pod not stopped")
	}
}

func TestPostStartFailureKillsContainer(t *testing.T) {
	h, _, fh := withProbes(t)
	fh.fail = true
	c := ctr("a", "app:1")
	c.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"/bin/init"}}}}
	p := testPod("web", c)
	p.Spec.RestartPolicy = v1.RestartPolicyNever
	h.put(p)
	h.settle("default/web")
	if len(fh.calls) != 1 {
		t.Fatalf("postStart calls %d", len(fh.calls))
	}
	if h.running("default/web")["a"] != nil {
		t.Fatal("container kept running after its postStart hook failed")
	}
	got, _ := h.st.Pod(nil, "default/web")
	if got.Status.Phase != v1.PodFailed {
		t.Errorf("phase %s", got.Status.Phase)
	}
	_ = model.SandboxName
}

// A deleted pod's probes stop with it.
func TestDeletedPodStopsItsProbes(t *testing.T) {
	h, fp, _ := withProbes(t)
	c := ctr("a", "app:1")
	c.LivenessProbe = probe()
	h.put(testPod("web", c))
	h.settle("default/web")
	if len(fp.synced["default/web"]) != 1 {
		t.Fatalf("probes %+v", fp.synced["default/web"])
	}
	_ = h.st.DeletePod("default/web")
	h.settle("default/web")
	if got, ok := fp.synced["default/web"]; !ok || len(got) != 0 {
		t.Fatalf("probes of the deleted pod still synced: %+v", got)
	}
}

// flakyInspect fails the first inspect of every container; while hold is
// set, later inspects wait for it to close.
type flakyInspect struct {
	*fake.Runtime
	mu   sync.Mutex
	seen map[string]bool
	hold chan struct{}
}

func (f *flakyInspect) InspectContainer(ctx context.Context, id string) (*model.Container, error) {
	f.mu.Lock()
	first := !f.seen[id]
	f.seen[id] = true
	hold := f.hold
	f.mu.Unlock()
	if first {
		return nil, errors.New("engine busy")
	}
	if hold != nil {
		<-hold
	}
	return f.Runtime.InspectContainer(ctx, id)
}

// A sandbox whose inspect failed is asked again for its IP; until then no
// probe runs against the host's loopback.
func TestSandboxIPAskedAgainAfterAFailedInspect(t *testing.T) {
	h, fp, _ := withProbes(t)
	cfg := h.ctrl.cfg
	fi := &flakyInspect{Runtime: h.rt, seen: map[string]bool{}}
	h.ctrl = New(cfg, h.st, fi, nil)
	c := ctr("a", "app:1")
	c.ReadinessProbe = probe()
	h.put(testPod("web", c))
	h.reconcile("default/web") // starts all; the inspect for the IP fails
	// The IP is still unknown: asked again, beside the worker; its answer
	// is held until the pass's status is checked.
	release := make(chan struct{})
	fi.mu.Lock()
	fi.hold = release
	fi.mu.Unlock()
	if _, err := h.ctrl.Reconcile(context.Background(), "default/web"); err != nil {
		t.Fatal(err)
	}
	p, _ := h.st.Pod(nil, "default/web")
	if p.Status.PodIP != "" || len(fp.synced["default/web"]) != 0 {
		t.Fatalf("test broken: IP %q known, probes %+v", p.Status.PodIP, fp.synced["default/web"])
	}
	close(release)
	h.waitIdle("default/web")
	h.reconcile("default/web") // the wakeup after the inspect
	p, _ = h.st.Pod(nil, "default/web")
	if p.Status.PodIP == "" {
		t.Fatal("pod IP still unknown after it was asked again")
	}
	if got := fp.synced["default/web"]; len(got) != 1 || got[0].PodIP != p.Status.PodIP {
		t.Fatalf("probes %+v, want one against %s", got, p.Status.PodIP)
	}
}

// A pod whose sandbox is gone has no handler address: never the host's
// loopback, which a preStop hook would otherwise reach.
func TestHandlerAddressWithoutSandbox(t *testing.T) {
	exited := &model.Container{Name: model.SandboxName, State: model.StateExited, IP: "172.17.0.9"}
	if got := handlerAddress([]*model.Container{exited}, false); got != "" {
		t.Errorf("no running sandbox: %q", got)
	}
	if got := handlerAddress(nil, true); got != "127.0.0.1" {
		t.Errorf("hostNetwork: %q", got)
	}
	running := &model.Container{Name: model.SandboxName, State: model.StateRunning, IP: "172.17.0.9"}
	if got := handlerAddress([]*model.Container{running}, false); got != "172.17.0.9" {
		t.Errorf("running sandbox: %q", got)
	}
}
