package controller

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/restarts"
	"github.com/berth-dev/berth/runtime/fake"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/pause"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

type harness struct {
	t     *testing.T
	st    *store.Store
	rt    *fake.Runtime
	ctrl  *Controller
	clock *clocktesting.FakeClock
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st, err := store.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	rt := fake.New(clk.Now)
	rt.AddImage("app:1")
	rt.AddImage("app:2")
	ctrl := New(Config{
		Node: "n1", RootDir: t.TempDir(), PauseImage: "berth/pause:test", PauseBuild: testPauseBuild(),
		Backoff: restarts.Backoff{Initial: 10 * time.Second, Max: 40 * time.Second, Reset: 10 * time.Minute},
		Clock:   clk,
	}, st, rt, nil)
	if err := st.UpsertSource(&model.Source{Name: "file", Synced: true}); err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, st: st, rt: rt, ctrl: ctrl, clock: clk}
}

func testPod(name string, ctrs ...v1.Container) *v1.Pod {
	grace := int64(1)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("01234567-89ab-cdef-0000-" + name)},
		Spec:       v1.PodSpec{Containers: ctrs, RestartPolicy: v1.RestartPolicyAlways, TerminationGracePeriodSeconds: &grace},
	}
}

func ctr(name, image string, env ...string) v1.Container {
	c := v1.Container{Name: name, Image: image, ImagePullPolicy: v1.PullIfNotPresent}
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		c.Env = append(c.Env, v1.EnvVar{Name: k, Value: v})
	}
	return c
}

func (h *harness) put(p *v1.Pod) {
	h.t.Helper()
	err := h.st.UpsertPod(&model.Pod{Key: p.Namespace + "/" + p.Name, Source: "file", Origin: "f.yaml", Spec: p, SeenAt: h.clock.Now()})
	if err != nil {
		h.t.Fatal(err)
	}
}

// settle reconciles key until a pass makes no runtime call, as the queue
// would after each write-through notification.
func (h *harness) settle(key string) Result {
	h.t.Helper()
	var res Result
	for i := 0; i < 10; i++ {
		before := h.calls()
		r, err := h.ctrl.Reconcile(context.Background(), key)
		if err != nil {
			h.t.Fatalf("reconcile %s: %v", key, err)
		}
		h.waitPulls()
		h.ctrl.ops.wait()
		res = r
		if h.calls() == before {
			return res
		}
	}
	h.t.Fatalf("reconcile of %s did not settle", key)
	return res
}

// reconcile reconciles key once and waits for the background operation it
// started (not for other pods').
func (h *harness) reconcile(key string) Result {
	h.t.Helper()
	r, err := h.ctrl.Reconcile(context.Background(), key)
	if err != nil {
		h.t.Fatalf("reconcile %s: %v", key, err)
	}
	h.waitIdle(key)
	return r
}

// waitIdle waits for the background operation key has running now, if
// any, to end (Controller.Idle).
func (h *harness) waitIdle(key string) {
	h.t.Helper()
	select {
	case <-h.ctrl.Idle(key):
	case <-time.After(5 * time.Second):
		h.t.Fatalf("background operation of %s did not end", key)
	}
}

// waitPulls waits until no background image pull runs, its outcome
// recorded.
func (h *harness) waitPulls() {
	h.t.Helper()
	done := make(chan struct{})
	go func() {
		h.ctrl.images.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		h.t.Fatal("image pull did not finish")
	}
}

func (h *harness) calls() int {
	n := 0
	for _, m := range []string{"CreateContainer", "StartContainer", "StopContainer", "RemoveContainer", "PullImage", "BuildImage"} {
		n += h.rt.CallCount(m)
	}
	return n
}

// running returns the running containers of pod key by container name.
func (h *harness) running(key string) map[string]*model.Container {
	h.t.Helper()
	cs, err := h.rt.ListContainers(context.Background(), map[string]string{runtime.LabelManaged: "true"})
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]*model.Container{}
	for _, c := range cs {
		if c.PodKey == key && c.Running() {
			if out[c.Name] != nil {
				h.t.Fatalf("two running instances of %s/%s", key, c.Name)
			}
			out[c.Name] = c
		}
	}
	return out
}

func TestCreatesSandboxAndContainers(t *testing.T) {
	h := newHarness(t)
	p := testPod("web", ctr("a", "app:1", "X=1"), ctr("b", "app:1"))
	p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 8080, HostPort: 18080, Protocol: v1.ProtocolTCP}}
	h.put(p)
	h.settle("default/web")

	run := h.running("default/web")
	if len(run) != 3 || run["POD"] == nil || run["a"] == nil || run["b"] == nil {
		t.Fatalf("want POD, a, b running; got %v", run)
	}
	if h.rt.CallCount("BuildImageData") != 1 {
		t.Errorf("pause image built %d times, want 1", h.rt.CallCount("BuildImageData"))
	}
	sb, _ := h.rt.Config(run["POD"].ID)
	if len(sb.Ports) != 1 || sb.Ports[0].HostPort != 18080 || sb.Ports[0].Protocol != "tcp" {
		t.Errorf("sandbox ports = %+v", sb.Ports)
	}
	a, _ := h.rt.Config(run["a"].ID)
	if a.NetworkMode != "container:"+run["POD"].ID {
		t.Errorf("app network mode %q", a.NetworkMode)
	}
	if a.Name != "berth_a_web_default_01234567_0" {
		t.Errorf("docker name %q", a.Name)
	}
	for k, want := range map[string]string{runtime.LabelManaged: "true", runtime.LabelPodNamespace: "default", runtime.LabelPodName: "web",
		runtime.LabelContainerName: "a", runtime.LabelSource: "file", runtime.LabelNode: "n1", runtime.LabelRestartCount: "0"} {
		if a.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, a.Labels[k], want)
		}
	}
	if len(a.Env) != 1 || a.Env[0] != "X=1" {
		t.Errorf("env %v", a.Env)
	}
	got, _ := h.st.Pod(nil, "default/web")
	if got.Status.Phase != v1.PodRunning || got.StartedAt.IsZero() {
		t.Errorf("status phase %q startedAt %v", got.Status.Phase, got.StartedAt)
	}
}

func TestEnvEditRecreatesOnlyThatContainer(t *testing.T) {
	h := newHarness(t)
	h.put(testPod("web", ctr("a", "app:1", "X=1"), ctr("b", "app:1")))
	h.settle("default/web")
	before := h.running("default/web")

	h.put(testPod("web", ctr("a", "app:1", "X=2"), ctr("b", "app:1")))
	h.settle("default/web")
	after := h.running("default/web")
	if after["a"].ID == before["a"].ID {
		t.Error("edited container a was not recreated")
	}
	if after["b"].ID != before["b"].ID || after["POD"].ID != before["POD"].ID {
		t.Error("unedited containers were recreated")
	}
	cfg, _ := h.rt.Config(after["a"].ID)
	if cfg.Env[0] != "X=2" {
		t.Errorf("env %v", cfg.Env)
	}
}

func TestPortEditRecreatesPod(t *testing.T) {
	h := newHarness(t)
	p := testPod("web", ctr("a", "app:1"), ctr("b", "app:1"))
	h.put(p)
	h.settle("default/web")
	before := h.running("default/web")

	p2 := p.DeepCopy()
	p2.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8081, Protocol: v1.ProtocolTCP}}
	h.put(p2)
	h.settle("default/web")
	after := h.running("default/web")
	for _, n := range []string{"POD", "a", "b"} {
		if after[n] == nil || after[n].ID == before[n].ID {
			t.Errorf("%s not recreated", n)
		}
	}
	if after["b"].Labels[runtime.LabelSandbox] != after["POD"].ID {
		t.Error("b does not join the new sandbox")
	}
}

func TestDeleteWaitsForSourceSync(t *testing.T) {
	h := newHarness(t)
	h.put(testPod("web", ctr("a", "app:1")))
	h.settle("default/web")
	if err := h.st.UpsertSource(&model.Source{Name: "file", Synced: false}); err != nil {
		t.Fatal(err)
	}
	if err := h.st.DeletePod("default/web"); err != nil {
		t.Fatal(err)
	}
	h.settle("default/web")
	if len(h.running("default/web")) != 2 {
		t.Fatal("containers removed before the source synced")
	}
	if err := h.st.UpsertSource(&model.Source{Name: "file", Synced: true}); err != nil {
		t.Fatal(err)
	}
	h.settle("default/web")
	all, _ := h.rt.ListContainers(context.Background(), nil)
	if len(all) != 0 {
		t.Fatalf("%d containers left after delete", len(all))
	}
}

func TestUnmanagedContainerUntouched(t *testing.T) {
	h := newHarness(t)
	id, err := h.rt.CreateContainer(context.Background(), &runtime.ContainerConfig{Name: "other", Image: "app:1",
		Labels: map[string]string{runtime.LabelPodNamespace: "default", runtime.LabelPodName: "web"}})
	if err != nil {
		t.Fatal(err)
	}
	h.put(testPod("web", ctr("a", "app:1")))
	h.settle("default/web")
	_ = h.st.DeletePod("default/web")
	h.settle("default/web")
	if _, err := h.rt.InspectContainer(context.Background(), id); err != nil {
		t.Fatal("unmanaged container was removed")
	}
}

func TestCrashLoopBackoff(t *testing.T) {
	h := newHarness(t)
	h.put(testPod("web", ctr("a", "app:1")))
	h.settle("default/web")

	crash := func() {
		a := h.running("default/web")["a"]
		h.rt.Exit(a.ID, 1)
		h.ctrl.obs.refresh(context.Background(), a.ID)
	}
	// First crash restarts at once, then 10s, 20s, 40s, 40s (max).
	crash()
	h.settle("default/web")
	if h.running("default/web")["a"] == nil {
		t.Fatal("first crash not restarted immediately")
	}
	for _, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 40 * time.Second} {
		crash()
		res := h.settle("default/web")
		if res.RequeueAfter != want {
			t.Fatalf("requeue after %v, want %v", res.RequeueAfter, want)
		}
		p, _ := h.st.Pod(nil, "default/web")
		if w := p.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "CrashLoopBackOff" {
			t.Fatalf("status %+v, want CrashLoopBackOff", p.Status.ContainerStatuses[0].State)
		}
		h.clock.Step(want - time.Millisecond)
		h.settle("default/web")
		if h.running("default/web")["a"] != nil {
			t.Fatal("restarted before the backoff elapsed")
		}
		h.clock.Step(time.Millisecond)
		h.settle("default/web")
		if h.running("default/web")["a"] == nil {
			t.Fatal("not restarted after the backoff")
		}
	}
	a := h.running("default/web")["a"]
	if a.RestartCount != 5 {
		t.Errorf("restart count %d, want 5", a.RestartCount)
	}
	// Only the latest exited instance is kept besides the running one.
	all, _ := h.rt.ListContainers(context.Background(), map[string]string{runtime.LabelContainerName: "a"})
	if len(all) != 2 {
		t.Errorf("%d instances of a kept, want 2 (running + last exited)", len(all))
	}
}

func TestRestartPolicies(t *testing.T) {
	for _, tc := range []struct {
		policy  v1.RestartPolicy
		code    int
		restart bool
		phase   v1.PodPhase
	}{
		{v1.RestartPolicyOnFailure, 0, false, v1.PodSucceeded},
		{v1.RestartPolicyOnFailure, 2, true, v1.PodRunning},
		{v1.RestartPolicyNever, 2, false, v1.PodFailed},
		{v1.RestartPolicyNever, 0, false, v1.PodSucceeded},
		{v1.RestartPolicyAlways, 0, true, v1.PodRunning},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			h := newHarness(t)
			p := testPod("job", ctr("a", "app:1"))
			p.Spec.RestartPolicy = tc.policy
			h.put(p)
			h.settle("default/job")
			a := h.running("default/job")["a"]
			h.rt.Exit(a.ID, tc.code)
			h.ctrl.obs.refresh(context.Background(), a.ID)
			h.settle("default/job")
			if got := h.running("default/job")["a"] != nil; got != tc.restart {
				t.Errorf("restarted=%v, want %v", got, tc.restart)
			}
			got, _ := h.st.Pod(nil, "default/job")
			if got.Status.Phase != tc.phase {
				t.Errorf("phase %s, want %s", got.Status.Phase, tc.phase)
			}
		})
	}
}

func TestAdoptionCreatesNothing(t *testing.T) {
	h := newHarness(t)
	h.put(testPod("web", ctr("a", "app:1"), ctr("b", "app:1")))
	h.settle("default/web")
	before := h.running("default/web")

	// A new berth: fresh store and controller over the same engine.
	st2, _ := store.New(nil)
	_ = st2.UpsertSource(&model.Source{Name: "file", Synced: true})
	cs, _ := h.rt.ListContainers(context.Background(), map[string]string{runtime.LabelNode: "n1"})
	for _, c := range cs {
		full, _ := h.rt.InspectContainer(context.Background(), c.ID)
		_, _ = st2.UpsertContainer(full)
	}
	h.st = st2
	h.ctrl = New(h.ctrl.cfg, st2, h.rt, nil)
	h.put(testPod("web", ctr("a", "app:1"), ctr("b", "app:1")))
	creates := h.rt.CallCount("CreateContainer")
	h.settle("default/web")
	if h.rt.CallCount("CreateContainer") != creates {
		t.Fatal("adoption created containers")
	}
	after := h.running("default/web")
	for n, c := range before {
		if after[n].ID != c.ID {
			t.Errorf("%s replaced on adoption", n)
		}
	}
}

func TestRemovedContainerRecreatedAndSandboxLoss(t *testing.T) {
	h := newHarness(t)
	h.put(testPod("web", ctr("a", "app:1"), ctr("b", "app:1")))
	h.settle("default/web")
	before := h.running("default/web")
	h.rt.Remove(before["a"].ID)
	_ = h.st.DeleteContainer(before["a"].ID, h.st.Seq())
	h.settle("default/web")
	mid := h.running("default/web")
	if mid["a"] == nil || mid["b"].ID != before["b"].ID {
		t.Fatal("removed container not recreated alone")
	}
	h.rt.Exit(mid["POD"].ID, 137)
	h.ctrl.obs.refresh(context.Background(), mid["POD"].ID)
	h.settle("default/web")
	after := h.running("default/web")
	if after["POD"] == nil || after["POD"].ID == mid["POD"].ID || after["a"] == nil || after["a"].Labels[runtime.LabelSandbox] != after["POD"].ID {
		t.Fatal("pod not recreated around a new sandbox")
	}
}

func TestImagePullBackOff(t *testing.T) {
	h := newHarness(t)
	h.rt.PullErr = context.DeadlineExceeded
	h.put(testPod("web", ctr("a", "missing:1"), ctr("b", "app:1")))
	h.reconcile("default/web")
	p, _ := h.st.Pod(nil, "default/web")
	if w := p.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ContainerCreating" {
		t.Fatalf("a state while pulling %+v", p.Status.ContainerStatuses[0].State)
	}
	h.waitPulls()
	res := h.reconcile("default/web")
	if res.RequeueAfter != 10*time.Second {
		t.Errorf("requeue %v, want 10s", res.RequeueAfter)
	}
	p, _ = h.st.Pod(nil, "default/web")
	if w := p.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ErrImagePull" {
		t.Fatalf("a state %+v", p.Status.ContainerStatuses[0].State)
	}
	if h.running("default/web")["b"] == nil {
		t.Fatal("b not started while a cannot pull")
	}
	h.clock.Step(time.Second)
	h.settle("default/web")
	p, _ = h.st.Pod(nil, "default/web")
	if w := p.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ImagePullBackOff" {
		t.Fatalf("a state %+v", p.Status.ContainerStatuses[0].State)
	}
	h.rt.PullErr = nil
	h.clock.Step(10 * time.Second)
	h.settle("default/web")
	if h.running("default/web")["a"] == nil {
		t.Fatal("a not started after the image became pullable")
	}
}

func TestInitContainersRunInOrder(t *testing.T) {
	h := newHarness(t)
	p := testPod("web", ctr("app", "app:1"))
	p.Spec.InitContainers = []v1.Container{ctr("i1", "app:1"), ctr("i2", "app:1")}
	h.put(p)
	h.settle("default/web")
	run := h.running("default/web")
	if run["i1"] == nil || run["i2"] != nil || run["app"] != nil {
		t.Fatalf("want only i1 running, got %v", run)
	}
	got, _ := h.st.Pod(nil, "default/web")
	if ics := got.Status.InitContainerStatuses; len(ics) != 2 || ics[0].State.Running == nil || ics[1].State.Waiting == nil || got.Status.Phase != v1.PodPending {
		t.Errorf("init statuses while i1 runs: phase %s %+v", got.Status.Phase, ics)
	}
	h.rt.Exit(run["i1"].ID, 0)
	h.ctrl.obs.refresh(context.Background(), run["i1"].ID)
	h.settle("default/web")
	run = h.running("default/web")
	if run["i2"] == nil || run["app"] != nil {
		t.Fatalf("want i2 running, got %v", run)
	}
	h.rt.Exit(run["i2"].ID, 0)
	h.ctrl.obs.refresh(context.Background(), run["i2"].ID)
	h.settle("default/web")
	if h.running("default/web")["app"] == nil {
		t.Fatal("app not started after init containers")
	}
}

func TestSlowPullDoesNotBlockOtherPods(t *testing.T) {
	h := newHarness(t)
	block := make(chan struct{})
	h.rt.PullBlock = block
	h.put(testPod("slow", ctr("a", "remote:1")))
	h.put(testPod("fast", ctr("a", "app:1")))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := h.ctrl.Reconcile(context.Background(), "default/slow"); err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("reconcile waited for the image pull")
	}
	for i := 0; i < 3; i++ {
		h.reconcile("default/fast")
	}
	if h.running("default/fast")["a"] == nil {
		t.Fatal("other pod not started during a pull")
	}
	close(block)
	h.settle("default/slow")
	if h.running("default/slow")["a"] == nil {
		t.Fatal("pod not started after its pull")
	}
}

func TestMemoryVolumeGoesWithItsPod(t *testing.T) {
	h := newHarness(t)
	withShm := func(name string) *v1.Pod {
		p := testPod(name, ctr("a", "app:1"))
		p.Spec.Volumes = []v1.Volume{{Name: "shm", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}}}
		p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "shm", MountPath: "/shm"}}
		return p
	}
	web, db := withShm("web"), withShm("db")
	h.put(web)
	h.put(db)
	h.settle("default/web")
	h.settle("default/db")
	webVol, dbVol := "berth-"+string(web.UID)+"-shm", "berth-"+string(db.UID)+"-shm"
	if vols := h.rt.Volumes(); len(vols) != 2 {
		t.Fatalf("volumes %v, want %s and %s", slices.Collect(maps.Keys(vols)), webVol, dbVol)
	}
	if err := h.st.DeletePod("default/web"); err != nil {
		t.Fatal(err)
	}
	h.settle("default/web")
	vols := h.rt.Volumes()
	if _, ok := vols[webVol]; ok {
		t.Errorf("volume %s of the deleted pod is left", webVol)
	}
	if _, ok := vols[dbVol]; !ok {
		t.Errorf("volume %s of the running pod was removed", dbVol)
	}
}

// testPauseBuild is a pause program for the fake engine.
func testPauseBuild() *pause.Build {
	exe := []byte("pause program")
	return &pause.Build{Exe: exe, Path: pause.Path, Entrypoint: []string{pause.Path}, Digest: pause.Digest(exe)}
}
