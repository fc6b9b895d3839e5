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
