package podstatus

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/model"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func testPod(names ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"}}
	for _, n := range names {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: n, Image: "app:1"})
	}
	return p
}

// running is a running instance of container name of p.
func running(p *v1.Pod, name string) *model.Container {
	return &model.Container{ID: name + "-0", PodKey: "default/web", PodUID: string(p.UID), Name: name,
		State: model.StateRunning, StartedAt: now.Add(-time.Minute)}
}

func TestTerminatedMessageKeepsEngineError(t *testing.T) {
	ct := &model.Container{ID: "x", ExitCode: 1, Error: "oci runtime error"}
	if got := terminated(ct, "").Message; got != "oci runtime error" {
		t.Errorf("message %q", got)
	}
	if got := terminated(ct, "bye").Message; got != "oci runtime error: bye" {
		t.Errorf("message %q", got)
	}
}

func TestStartedFalseUnlessRunning(t *testing.T) {
	p := testPod("a", "b")
	in := &Input{Waiting: map[string]v1.ContainerStateWaiting{}, Now: now}
	s := Compute(&model.Pod{Spec: p}, map[string][]*model.Container{"a": {running(p, "a")}}, in)
	a, b := s.ContainerStatuses[0], s.ContainerStatuses[1]
	if a.Started == nil || !*a.Started || b.Started == nil || *b.Started {
		t.Fatalf("started a=%v b=%v", a.Started, b.Started)
	}
	if w := b.State.Waiting; w == nil || w.Reason != "ContainerCreating" {
		t.Errorf("b %+v", b.State)
	}
}

// A pod is not ready before it has an address: a running container of a
// sandbox whose IP is not known yet counts not ready, so no status shows
// Ready without a podIP (kubectl get -w printed Running 1/1 twice, the
// second only adding the IP).
func TestNotReadyWithoutPodIP(t *testing.T) {
	p := testPod("a")
	run := running(p, "a")
	sb := running(p, model.SandboxName)
	in := &Input{Waiting: map[string]v1.ContainerStateWaiting{}, Now: now}
	s := Compute(&model.Pod{Spec: p}, map[string][]*model.Container{"a": {run}, model.SandboxName: {sb}}, in)
	if s.ContainerStatuses[0].Ready || s.PodIP != "" {
		t.Fatalf("sandbox without IP: ready %v, podIP %q", s.ContainerStatuses[0].Ready, s.PodIP)
	}
	withIP := *sb
	withIP.IP = "172.17.0.9"
	s = Compute(&model.Pod{Spec: p}, map[string][]*model.Container{"a": {run}, model.SandboxName: {&withIP}}, in)
	if !s.ContainerStatuses[0].Ready || s.PodIP != "172.17.0.9" {
		t.Fatalf("sandbox with IP: ready %v, podIP %q", s.ContainerStatuses[0].Ready, s.PodIP)
	}
}

// A failure the plan decided (an exceeded deadline, an eviction) fails the
// pod with its reason and message; a phase recorded as terminal for the
// spec stays whatever the containers say, and is recorded only for the
// spec it ended under.
func TestFailureAndTerminalPhase(t *testing.T) {
	p := testPod("a")
	byName := map[string][]*model.Container{"a": {running(p, "a")}}
	in := &Input{Now: now, SpecHash: "h1", FailReason: "Evicted", FailMessage: "too big"}
	row := &model.Pod{Spec: p}
	Apply(row, byName, nil, in)
	if row.Status.Phase != v1.PodFailed || row.Status.Reason != "Evicted" || row.Status.Message != "too big" {
		t.Fatalf("status %s %q %q", row.Status.Phase, row.Status.Reason, row.Status.Message)
	}
	if row.Terminal != v1.PodFailed || row.TerminalSpec != "h1" {
		t.Fatalf("terminal %q for %q", row.Terminal, row.TerminalSpec)
	}
	in.FailReason, in.FailMessage = "", ""
	before := *row
	Apply(row, byName, nil, in)
	if row.Status.Phase != v1.PodFailed || Changed(&before, row) {
		t.Fatalf("terminal phase did not stay: %s (changed %v)", row.Status.Phase, Changed(&before, row))
	}
	in.SpecHash = "h2" // an edited spec runs again
	if Apply(row, byName, nil, in); row.Status.Phase != v1.PodRunning || row.StartedAt != now {
		t.Fatalf("edited spec: phase %s, startedAt %v", row.Status.Phase, row.StartedAt)
	}
}
