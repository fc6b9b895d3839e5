package controller

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/model"
)

// condition is the condition of type t in s (zero when absent).
func condition(s v1.PodStatus, t v1.PodConditionType) v1.PodCondition {
	for _, c := range s.Conditions {
		if c.Type == t {
			return c
		}
	}
	return v1.PodCondition{}
}

func (h *harness) status(key string) v1.PodStatus {
	h.t.Helper()
	p, _ := h.st.Pod(nil, key)
	if p == nil {
		h.t.Fatalf("pod %s not stored", key)
	}
	return p.Status
}

// exit ends the running container name of pod key with code.
func (h *harness) exit(key, name string, code int) *model.Container {
	h.t.Helper()
	ct := h.running(key)[name]
	if ct == nil {
		h.t.Fatalf("%s/%s not running", key, name)
	}
	h.rt.Exit(ct.ID, code)
	h.ctrl.obs.refresh(context.Background(), ct.ID)
	return ct
}

func neverPod(name string, ctrs ...v1.Container) *v1.Pod {
	p := testPod(name, ctrs...)
	p.Spec.RestartPolicy = v1.RestartPolicyNever
	return p
}

// A finished pod's sandbox is stopped (not replaced), and its phase stays
// when the sandbox and even its containers are gone later.
func TestTerminalPhaseStays(t *testing.T) {
	h := newHarness(t)
	h.put(neverPod("job", ctr("a", "app:1")))
	h.settle("default/job")
	sb := h.running("default/job")["POD"]
	h.exit("default/job", "a", 0)
	h.settle("default/job")
	if run := h.running("default/job"); len(run) != 0 {
		t.Fatalf("finished pod still runs %v", run)
	}
	creates := h.rt.CallCount("CreateContainer")
	s := h.status("default/job")
	if s.Phase != v1.PodSucceeded {
		t.Fatalf("phase %s, want Succeeded", s.Phase)
	}
	if ct, _ := h.st.Container(nil, sb.ID); ct == nil || ct.State != model.StateExited {
		t.Fatalf("sandbox not stopped and kept: %+v", ct)
	}
	if c := condition(s, v1.PodReadyToStartContainers); c.Status != v1.ConditionFalse {
		t.Errorf("PodReadyToStartContainers %s with the sandbox stopped", c.Status)
	}

	// The sandbox, then every container, disappear from the engine.
	all, _ := h.rt.ListContainers(context.Background(), nil)
	for _, ct := range all {
		h.rt.Remove(ct.ID)
		_ = h.st.DeleteContainer(ct.ID, h.st.Seq())
	}
	h.clock.Step(time.Minute)
	h.settle("default/job")
	if got := h.rt.CallCount("CreateContainer"); got != creates {
		t.Fatalf("%d containers created for a finished pod", got-creates)
	}
	s = h.status("default/job")
	if s.Phase != v1.PodSucceeded {
		t.Fatalf("phase %s after the sandbox went, want Succeeded", s.Phase)
	}
	if term := s.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 0 {
		t.Fatalf("a's last state lost: %+v", s.ContainerStatuses[0].State)
	}
}

// A spec edit of an ended pod is a new incarnation: it runs again.
func TestEditOfEndedPodRunsAgain(t *testing.T) {
	h := newHarness(t)
	h.put(neverPod("job", ctr("a", "app:1")))
	h.settle("default/job")
	h.exit("default/job", "a", 1)
	h.settle("default/job")
	if s := h.status("default/job"); s.Phase != v1.PodFailed {
		t.Fatalf("phase %s, want Failed", s.Phase)
	}
	h.put(neverPod("job", ctr("a", "app:1", "X=2")))
	h.settle("default/job")
	if h.running("default/job")["a"] == nil {
		t.Fatal("edited pod not run again")
	}
	if s := h.status("default/job"); s.Phase != v1.PodRunning {
		t.Fatalf("phase %s, want Running", s.Phase)
	}
}

func TestActiveDeadline(t *testing.T) {
	h := newHarness(t)
	rec := events.NewBuffer(100)
	h.ctrl.cfg.Events = rec
	p := testPod("web", ctr("a", "app:1"))
	secs := int64(30)
	p.Spec.ActiveDeadlineSeconds = &secs
	h.put(p)
	res := h.settle("default/web")
	if res.RequeueAfter != 30*time.Second {
		t.Fatalf("requeue after %v, want the deadline (30s)", res.RequeueAfter)
	}
	h.clock.Step(30 * time.Second)
	h.settle("default/web")
	if run := h.running("default/web"); len(run) != 0 {
		t.Fatalf("still running past the deadline: %v", run)
	}
	s := h.status("default/web")
	if s.Phase != v1.PodFailed || s.Reason != "DeadlineExceeded" || s.Message != deadlineMessage {
		t.Fatalf("status %s %q %q", s.Phase, s.Reason, s.Message)
	}
	if c := condition(s, v1.PodReady); c.Status != v1.ConditionFalse || c.Reason != "PodFailed" {
		t.Errorf("Ready %+v", c)
	}
	var seen bool
	for _, e := range rec.List() {
		if e.Reason == "DeadlineExceeded" && e.Type == events.Normal && e.Message == deadlineMessage {
			seen = true
		}
	}
	if !seen {
		t.Error("no DeadlineExceeded event")
	}
	h.clock.Step(time.Hour)
	h.settle("default/web")
	if s := h.status("default/web"); s.Phase != v1.PodFailed || s.Reason != "DeadlineExceeded" {
		t.Fatalf("later status %s %q", s.Phase, s.Reason)
	}
	if len(h.running("default/web")) != 0 {
		t.Fatal("restarted after the deadline")
	}
}

func TestHostIPAndQOS(t *testing.T) {
	h := newHarness(t)
	h.ctrl.cfg.NodeInfo.IP = "10.0.0.7"
	web := testPod("web", ctr("a", "app:1"))
	host := testPod("host", ctr("a", "app:1"))
	host.Spec.HostNetwork = true
	q := resource.MustParse("100m")
	host.Spec.Containers[0].Resources = v1.ResourceRequirements{
		Limits: v1.ResourceList{v1.ResourceCPU: q, v1.ResourceMemory: resource.MustParse("64Mi")}}
	h.put(web)
	h.put(host)
	h.settle("default/web")
	h.settle("default/host")
	s := h.status("default/web")
	if s.HostIP != "10.0.0.7" || len(s.HostIPs) != 1 || s.HostIPs[0].IP != "10.0.0.7" {
		t.Errorf("hostIP %q %v", s.HostIP, s.HostIPs)
	}
	if s.PodIP == "" || s.PodIP == "10.0.0.7" {
		t.Errorf("podIP %q, want the sandbox's", s.PodIP)
	}
	if s.QOSClass != v1.PodQOSBestEffort {
		t.Errorf("qosClass %q", s.QOSClass)
	}
	s = h.status("default/host")
	if s.PodIP != "10.0.0.7" || len(s.PodIPs) != 1 || s.PodIPs[0].IP != "10.0.0.7" || s.HostIP != "10.0.0.7" {
		t.Errorf("hostNetwork podIP %q %v hostIP %q", s.PodIP, s.PodIPs, s.HostIP)
	}
	if s.QOSClass != v1.PodQOSGuaranteed {
		t.Errorf("qosClass %q", s.QOSClass)
	}
}

func TestConditionTransitionTimes(t *testing.T) {
	h := newHarness(t)
	h.put(neverPod("web", ctr("a", "app:1"), ctr("b", "app:1")))
	h.settle("default/web")
	h.reconcile("default/web") // the sandbox's IP is known
	first := h.status("default/web")
	var types []v1.PodConditionType
	for _, c := range first.Conditions {
		types = append(types, c.Type)
		if c.Status != v1.ConditionTrue {
			t.Errorf("%s is %s on a running pod", c.Type, c.Status)
		}
	}
	want := []v1.PodConditionType{v1.PodReadyToStartContainers, v1.PodInitialized, v1.PodReady, v1.ContainersReady, v1.PodScheduled}
	if len(types) != len(want) {
		t.Fatalf("conditions %v, want %v", types, want)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Fatalf("conditions %v, want %v", types, want)
		}
	}
	t0 := condition(first, v1.PodReady).LastTransitionTime

	h.clock.Step(10 * time.Second)
	h.reconcile("default/web")
	for _, c := range h.status("default/web").Conditions {
		if !c.LastTransitionTime.Equal(&t0) {
			t.Errorf("%s lastTransitionTime moved without a flip: %v", c.Type, c.LastTransitionTime)
		}
	}

	h.clock.Step(10 * time.Second)
	h.exit("default/web", "a", 1)
	h.reconcile("default/web")
	s := h.status("default/web")
	ready := condition(s, v1.PodReady)
	if ready.Status != v1.ConditionFalse || !ready.LastTransitionTime.Time.Equal(h.clock.Now()) {
		t.Errorf("Ready after the crash: %+v (now %v)", ready, h.clock.Now())
	}
	if ready.Reason != "ContainersNotReady" || ready.Message != "containers with unready status: [a]" {
		t.Errorf("Ready reason %q message %q", ready.Reason, ready.Message)
	}
	if sc := condition(s, v1.PodScheduled); !sc.LastTransitionTime.Equal(&t0) {
		t.Errorf("PodScheduled moved: %v", sc.LastTransitionTime)
	}
}

func TestCompletedConditions(t *testing.T) {
	for _, tc := range []struct {
		code   int
		phase  v1.PodPhase
		reason string
	}{{0, v1.PodSucceeded, "PodCompleted"}, {3, v1.PodFailed, "PodFailed"}} {
		h := newHarness(t)
		h.put(neverPod("job", ctr("a", "app:1")))
		h.settle("default/job")
		h.exit("default/job", "a", tc.code)
		h.settle("default/job")
		s := h.status("default/job")
		if s.Phase != tc.phase {
			t.Fatalf("phase %s, want %s", s.Phase, tc.phase)
		}
		for _, typ := range []v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
			if c := condition(s, typ); c.Status != v1.ConditionFalse || c.Reason != tc.reason || c.Message != "" {
				t.Errorf("%s %+v, want False %s", typ, c, tc.reason)
			}
		}
		if c := condition(s, v1.PodInitialized); c.Status != v1.ConditionTrue {
			t.Errorf("Initialized %+v", c)
		}
		if tc.phase == v1.PodSucceeded && condition(s, v1.PodInitialized).Reason != "PodCompleted" {
			t.Errorf("Initialized reason %q, want PodCompleted", condition(s, v1.PodInitialized).Reason)
		}
		cs := s.ContainerStatuses[0]
		if cs.Started == nil || *cs.Started {
			t.Errorf("started %v for an exited container, want false", cs.Started)
		}
	}
}

func TestPodInitializing(t *testing.T) {
	h := newHarness(t)
	p := testPod("web", ctr("app", "app:1"))
	p.Spec.InitContainers = []v1.Container{ctr("i1", "app:1"), ctr("i2", "app:1")}
	h.put(p)
	h.settle("default/web")
	s := h.status("default/web")
	if w := s.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "PodInitializing" {
		t.Errorf("app state %+v, want waiting PodInitializing", s.ContainerStatuses[0].State)
	}
	if w := s.InitContainerStatuses[1].State.Waiting; w == nil || w.Reason != "PodInitializing" {
		t.Errorf("i2 state %+v, want waiting PodInitializing", s.InitContainerStatuses[1].State)
	}
	c := condition(s, v1.PodInitialized)
	if c.Status != v1.ConditionFalse || c.Reason != "ContainersNotInitialized" || c.Message != "containers with incomplete status: [i1 i2]" {
		t.Errorf("Initialized %+v", c)
	}
	for _, cs := range append(s.InitContainerStatuses, s.ContainerStatuses...) {
		if cs.Started == nil {
			t.Errorf("%s: started unset", cs.Name)
		}
	}
	if cs := s.ContainerStatuses[0]; *cs.Started {
		t.Error("app started while waiting")
	}
	h.exit("default/web", "i1", 0)
	h.settle("default/web")
	s = h.status("default/web")
	if !s.InitContainerStatuses[0].Ready {
		t.Error("succeeded init container not ready")
	}
	if c := condition(s, v1.PodInitialized); c.Message != "containers with incomplete status: [i2]" {
		t.Errorf("Initialized %+v", c)
	}
}

func TestTerminationMessageFromFile(t *testing.T) {
	h := newHarness(t)
	h.put(neverPod("job", ctr("a", "app:1")))
	h.settle("default/job")
	a := h.running("default/job")["a"]
	path := h.ctrl.status.msgs.Path(a.PodUID, "a", a.Attempt)
	long := strings.Repeat("x", 5000) + "the end"
	if err := os.WriteFile(path, []byte(long), 0o666); err != nil {
		t.Fatal(err)
	}
	h.exit("default/job", "a", 1)
	h.settle("default/job")
	term := h.status("default/job").ContainerStatuses[0].State.Terminated
	if term == nil || len(term.Message) != 4096 || !strings.HasSuffix(term.Message, "the end") {
		t.Fatalf("terminated %+v, want the file's last 4096 bytes", term)
	}
	// Read once, when the exit was first seen.
	_ = os.WriteFile(path, []byte("changed"), 0o666)
	h.clock.Step(time.Second)
	h.reconcile("default/job")
	if got := h.status("default/job").ContainerStatuses[0].State.Terminated.Message; got != term.Message {
		t.Errorf("message re-read: %q", got)
	}
}

func TestTerminationMessageFallsBackToLogs(t *testing.T) {
	h := newHarness(t)
	c := ctr("a", "app:1")
	c.TerminationMessagePolicy = v1.TerminationMessageFallbackToLogsOnError
	h.put(neverPod("job", c))
	h.settle("default/job")
	a := h.running("default/job")["a"]
	h.rt.SetLogs(a.ID, "starting\npanic: boom\n")
	h.exit("default/job", "a", 2)
	h.settle("default/job")
	term := h.status("default/job").ContainerStatuses[0].State.Terminated
	if term == nil || term.Message != "starting\npanic: boom\n" {
		t.Fatalf("terminated %+v, want the logs", term)
	}
	logs := h.rt.CallCount("Logs")
	h.reconcile("default/job")
	if h.rt.CallCount("Logs") != logs {
		t.Error("logs read again for a known exit")
	}
}

// A reconcile that changes nothing writes nothing: every status write holds
// the store's write lock and wakes every watcher (the etcd publisher, each
// /pods?watch), which then re-render every pod to find nothing new. The
// kubelet's status manager compares before it writes; so does berth.
func TestSteadyPodsWriteNoStatus(t *testing.T) {
	h := newHarness(t)
	var keys []string
	for i := range 100 {
		p := testPod(fmt.Sprintf("web%03d", i), ctr("a", "app:1"))
		h.put(p)
		keys = append(keys, "default/"+p.Name)
	}
	for _, k := range keys {
		h.settle(k)
		h.reconcile(k) // the status of the settled state
	}
	ws := memdb.NewWatchSet()
	before, err := h.st.Pods(ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range before {
		if p.Status.Phase != v1.PodRunning {
			t.Fatalf("%s is %s, not steady", p.Key, p.Status.Phase)
		}
	}
	h.clock.Step(30 * time.Second) // a resync later
	for _, k := range keys {
		h.reconcile(k)
	}
	for ch := range ws {
		select {
		case <-ch:
			t.Fatal("a resync of steady pods woke the pods' watchers")
		default:
		}
	}
	after, _ := h.st.Pods(nil)
	for i := range after {
		if after[i] != before[i] {
			t.Fatalf("%s: its row was rewritten by a resync that changed nothing", after[i].Key)
		}
	}

	// A change is still written: a crash shows in the status.
	c := h.running(keys[7])["a"]
	h.rt.Exit(c.ID, 1)
	h.ctrl.obs.refresh(context.Background(), c.ID)
	h.reconcile(keys[7])
	if p, _ := h.st.Pod(nil, keys[7]); p == before[7] || apiequality.Semantic.DeepEqual(p.Status, before[7].Status) {
		t.Fatalf("the crash of %s was not written: %+v", keys[7], p.Status.ContainerStatuses)
	}
}
