package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPrintPodsTable(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	list := &v1.PodList{Items: []v1.Pod{{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", CreationTimestamp: metav1.Time{Time: now.Add(-3 * time.Minute)},
			Annotations: map[string]string{"berth.io/source": "file", "berth.io/origin": "/etc/berth/pods/web.yaml"}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a"}, {Name: "b"}}},
		Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{
			{Name: "a", Ready: true, RestartCount: 2, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}},
			{Name: "b", RestartCount: 1, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}},
		}},
	}}}
	var out bytes.Buffer
	if err := printPods(&out, list, "wide", false, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "NAMESPACE") {
		t.Fatalf("table:\n%s", out.String())
	}
	for _, want := range []string{"web", "1/2", "CrashLoopBackOff", "3", "3m", "file", "/etc/berth/pods/web.yaml"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("row %q lacks %q", lines[1], want)
		}
	}
	if err := printPods(&out, list, "xml", false, now); err == nil {
		t.Error("unknown output format accepted")
	}
}

// As kubectl: a started sidecar counts in READY (and its restarts in
// RESTARTS) and does not hold the STATUS at Init.
func TestPodRowCountsSidecars(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	always := v1.ContainerRestartPolicyAlways
	yes, no := true, false
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{}}
	pod := func(init ...v1.ContainerStatus) *v1.Pod {
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
			Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "proxy", RestartPolicy: &always}, {Name: "setup"}},
				Containers: []v1.Container{{Name: "app"}}},
			Status: v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: init,
				ContainerStatuses: []v1.ContainerStatus{{Name: "app", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "PodInitializing"}}}}},
		}
	}
	initializing := pod(v1.ContainerStatus{Name: "proxy", Started: &yes, Ready: true, RestartCount: 1, State: running},
		v1.ContainerStatus{Name: "setup", Started: &yes, State: running})
	if got := podRow(initializing, false, now); got[2] != "1/2" || got[3] != "Init:1/2" || got[4] != "1" {
		t.Errorf("initializing: READY %s STATUS %s RESTARTS %s, want 1/2 Init:1/2 1", got[2], got[3], got[4])
	}
	notStarted := pod(v1.ContainerStatus{Name: "proxy", Started: &no, State: running}, v1.ContainerStatus{Name: "setup"})
	if got := podRow(notStarted, false, now); got[2] != "0/2" || got[3] != "Init:0/2" {
		t.Errorf("sidecar not started: READY %s STATUS %s, want 0/2 Init:0/2", got[2], got[3])
	}
	up := pod(v1.ContainerStatus{Name: "proxy", Started: &yes, Ready: true, RestartCount: 2, State: running},
		v1.ContainerStatus{Name: "setup", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: "Completed"}}})
	up.Status.Phase = v1.PodRunning
	up.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app", Ready: true, RestartCount: 1, State: running}}
	if got := podRow(up, false, now); got[2] != "2/2" || got[3] != "Running" || got[4] != "3" {
		t.Errorf("running: READY %s STATUS %s RESTARTS %s, want 2/2 Running 3", got[2], got[3], got[4])
	}
}
