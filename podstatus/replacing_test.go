package podstatus

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
)

// While an edit replaces the pod's sandbox, its old instances still run
// (their grace period), yet the pod is not Ready: its containers wait for
// their new instances, and the pod is Pending as a new pod would be.
func TestReplacedSandboxIsNotReady(t *testing.T) {
	p := testPod("a", "b")
	sb := running(p, model.SandboxName)
	sb.Hash, sb.IP = "old-sandbox", "10.0.0.2"
	a, b := running(p, "a"), running(p, "b")
	a.Hash, b.Hash = "ha", "hb"
	byName := map[string][]*model.Container{model.SandboxName: {sb}, "a": {a}, "b": {b}}
	ready := func(string) bool { return true }
	hash := func(c *v1.Container) string { return "h" + c.Name }

	in := &Input{Now: now, SandboxHash: "old-sandbox", Ready: ready, ContainerHash: hash}
	s := Compute(&model.Pod{Spec: p}, byName, in)
	if s.Phase != v1.PodRunning || !s.ContainerStatuses[0].Ready || !s.ContainerStatuses[1].Ready {
		t.Fatalf("before the edit: want Running and ready, got %s %+v", s.Phase, s.ContainerStatuses)
	}

	in = &Input{Now: now, SandboxHash: "new-sandbox", Ready: ready, ContainerHash: hash}
	s = Compute(&model.Pod{Spec: p}, byName, in)
	if s.Phase != v1.PodPending {
		t.Errorf("phase %s, want Pending while the sandbox is replaced", s.Phase)
	}
	for _, cs := range s.ContainerStatuses {
		if cs.Ready || cs.State.Waiting == nil || cs.State.Waiting.Reason != "ContainerCreating" || cs.State.Waiting.Message != SandboxChangedMessage {
			t.Errorf("container %s: ready=%v state=%+v, want waiting ContainerCreating", cs.Name, cs.Ready, cs.State)
		}
		if cs.ContainerID != "docker://"+cs.Name+"-0" {
			t.Errorf("container %s: containerID %q, want the running old instance's (its logs are served)", cs.Name, cs.ContainerID)
		}
	}
	for _, c := range s.Conditions {
		if (c.Type == v1.PodReady || c.Type == v1.ContainersReady || c.Type == v1.PodReadyToStartContainers) && c.Status != v1.ConditionFalse {
			t.Errorf("condition %s is %s", c.Type, c.Status)
		}
	}
}

// A container whose instance is of an older spec of it (an edit replaces
// it) is not ready, whatever its probe said.
func TestInstanceOfOlderSpecIsNotReady(t *testing.T) {
	p := testPod("a")
	sb := running(p, model.SandboxName)
	sb.Hash, sb.IP = "sb", "10.0.0.2"
	a := running(p, "a")
	a.Hash = "before"
	in := &Input{Now: now, SandboxHash: "sb", Ready: func(string) bool { return true },
		ContainerHash: func(*v1.Container) string { return "after" }}
	s := Compute(&model.Pod{Spec: p}, map[string][]*model.Container{model.SandboxName: {sb}, "a": {a}}, in)
	if s.ContainerStatuses[0].Ready || s.ContainerStatuses[0].State.Running == nil {
		t.Errorf("want running and not ready: %+v", s.ContainerStatuses[0])
	}
}

// Edited makes the containers an edit replaces unready in the edit's own
// write, and the pod with them; the input is not modified.
func TestEditedStatus(t *testing.T) {
	before := v1.PodStatus{Phase: v1.PodRunning,
		ContainerStatuses: []v1.ContainerStatus{{Name: "a", Ready: true}, {Name: "b", Ready: true}},
		Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}, {Type: v1.ContainersReady, Status: v1.ConditionTrue},
			{Type: v1.PodScheduled, Status: v1.ConditionTrue}}}
	pod := testPod("a", "b")
	none := Edited(pod, &before, func(string) bool { return false }, now)
	if none.Conditions[0].Status != v1.ConditionTrue || !none.ContainerStatuses[0].Ready {
		t.Errorf("an edit replacing nothing changed readiness: %+v", none)
	}
	got := Edited(pod, &before, func(n string) bool { return n == "b" }, now)
	if !got.ContainerStatuses[0].Ready || got.ContainerStatuses[1].Ready {
		t.Errorf("containers %+v, want only b unready", got.ContainerStatuses)
	}
	for _, c := range got.Conditions[:2] {
		if c.Status != v1.ConditionFalse || c.Reason != "ContainersNotReady" || !c.LastTransitionTime.Time.Equal(now) {
			t.Errorf("condition %+v", c)
		}
	}
	if got.Conditions[2].Status != v1.ConditionTrue || !before.ContainerStatuses[1].Ready || before.Conditions[0].Status != v1.ConditionTrue {
		t.Errorf("PodScheduled changed or the input was modified")
	}
}

// A regular init container an edit changes is not run again: neither the
// edit's write nor the controller's status makes the pod unready for it.
func TestEditedInitContainerKeepsReadiness(t *testing.T) {
	pod := testPod("a")
	pod.Spec.InitContainers = []v1.Container{{Name: "init", Image: "app:1"}}
	before := v1.PodStatus{Phase: v1.PodRunning,
		InitContainerStatuses: []v1.ContainerStatus{{Name: "init", Ready: true}},
		ContainerStatuses:     []v1.ContainerStatus{{Name: "a", Ready: true}},
		Conditions:            []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}}
	got := Edited(pod, &before, func(n string) bool { return n == "init" }, now)
	if got.Conditions[0].Status != v1.ConditionTrue {
		t.Errorf("an edited regular init container made the pod unready: %+v", got.Conditions[0])
	}

	sb := running(pod, model.SandboxName)
	sb.Hash, sb.IP = "sb", "10.0.0.2"
	init := &model.Container{ID: "init-0", PodUID: string(pod.UID), Name: "init", State: model.StateExited, Hash: "before"}
	a := running(pod, "a")
	a.Hash = "ha"
	in := &Input{Now: now, SandboxHash: "sb", ContainerHash: func(c *v1.Container) string {
		if c.Name == "init" {
			return "after"
		}
		return "h" + c.Name
	}}
	s := Compute(&model.Pod{Spec: pod}, map[string][]*model.Container{model.SandboxName: {sb}, "init": {init}, "a": {a}}, in)
	if !s.InitContainerStatuses[0].Ready || !s.ContainerStatuses[0].Ready {
		t.Errorf("init ready=%v a ready=%v, want both", s.InitContainerStatuses[0].Ready, s.ContainerStatuses[0].Ready)
	}
}
