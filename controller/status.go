package controller

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/prober"
)

// podState is what one reconcile learned, for the status it writes.
type podState struct {
	waiting    map[string]v1.ContainerStateWaiting // by container name
	failedInit bool
	probe      func(id string, kind prober.Kind) prober.Result
	// imageID resolves an image reference for containers whose row lacks
	// the image's ID (rows built from events).
	imageID func(ref string) (string, bool)
}

// writeStatus records the pod's status computed from byName (its
// containers as currentContainers returns them) and what this reconcile
// learned, and the pod start latency.
func (c *Controller) writeStatus(p *model.Pod, st *podState, byName map[string][]*model.Container) {
	pod := p.Spec
	status := computeStatus(pod, byName, st)
	status.StartTime = &metav1.Time{Time: p.SeenAt}
	if ip := sandboxIP(byName[model.SandboxName]); ip != "" {
		status.PodIP = ip
		status.PodIPs = []v1.PodIP{{IP: ip}}
	}
	allRunning := status.Phase == v1.PodRunning
	for _, cs := range status.ContainerStatuses {
		if cs.State.Running == nil {
			allRunning = false
		}
	}
	now := c.cfg.Clock.Now()
	var observed bool
	_, _ = c.store.UpdatePod(p.Key, func(cur *model.Pod) bool {
		if cur.Spec.UID != pod.UID {
			return false
		}
		cur.Status = status
		if allRunning && cur.StartedAt.IsZero() {
			cur.StartedAt = now
			observed = true
		}
		return true
	})
	if observed {
		c.cfg.Metrics.PodStarted(now.Sub(p.SeenAt))
	}
}

func containerID(ct *model.Container) string { return "docker://" + ct.ID }

func terminated(ct *model.Container) *v1.ContainerStateTerminated {
	reason := "Completed"
	switch {
	case ct.OOMKilled:
		reason = "OOMKilled"
	case ct.ExitCode != 0:
		reason = "Error"
	}
	return &v1.ContainerStateTerminated{
		ExitCode:    int32(ct.ExitCode),
		Reason:      reason,
		Message:     ct.Error,
		StartedAt:   metav1.Time{Time: ct.StartedAt},
		FinishedAt:  metav1.Time{Time: ct.FinishedAt},
		ContainerID: containerID(ct),
	}
}

func containerStatus(ctr *v1.Container, instances []*model.Container, st *podState) v1.ContainerStatus {
	cs := v1.ContainerStatus{Name: ctr.Name, Image: ctr.Image}
	if w, ok := st.waiting[ctr.Name]; ok {
		w := w
		cs.State.Waiting = &w
	}
	if len(instances) == 0 {
		if cs.State.Waiting == nil {
			cs.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}
		return cs
	}
	latest := instances[0]
	cs.RestartCount = int32(latest.RestartCount)
	cs.ContainerID = containerID(latest)
	cs.ImageID = latest.ImageID
	if cs.ImageID == "" && st.imageID != nil {
		cs.ImageID, _ = st.imageID(latest.Image)
	}
	if len(instances) > 1 && !instances[1].Running() {
		cs.LastTerminationState.Terminated = terminated(instances[1])
	}
	switch {
	case latest.Running():
		cs.State = v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.Time{Time: latest.StartedAt}}}
		started := ctr.StartupProbe == nil || st.probe(latest.ID, prober.Startup) == prober.Success
		cs.Started = &started
		cs.Ready = started && (ctr.ReadinessProbe == nil || st.probe(latest.ID, prober.Readiness) == prober.Success)
	case cs.State.Waiting != nil:
		// A backoff or error reason wins; the last run is history.
		cs.LastTerminationState.Terminated = terminated(latest)
	case latest.State == model.StateCreated:
		cs.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
	default:
		cs.State.Terminated = terminated(latest)
	}
	return cs
}

// computeStatus derives phase, conditions and container statuses the way
// the kubelet does for the same containers.
func computeStatus(pod *v1.Pod, byName map[string][]*model.Container, st *podState) v1.PodStatus {
	var status v1.PodStatus
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		status.InitContainerStatuses = append(status.InitContainerStatuses, containerStatus(ic, byName[ic.Name], st))
	}
	for i := range pod.Spec.Containers {
		ctr := &pod.Spec.Containers[i]
		status.ContainerStatuses = append(status.ContainerStatuses, containerStatus(ctr, byName[ctr.Name], st))
	}

	initialized := true
	for _, cs := range status.InitContainerStatuses {
		if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 {
			initialized = false
		}
	}
	var running, waiting, succeeded, failed int
	for _, cs := range status.ContainerStatuses {
		switch {
		case cs.State.Running != nil:
			running++
		case cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0:
			succeeded++
		case cs.State.Terminated != nil:
			failed++
		default:
			waiting++
			if cs.LastTerminationState.Terminated != nil {
				// Crash-looping containers count as running, as in the kubelet.
				running++
				waiting--
			}
		}
	}
	n := len(status.ContainerStatuses)
	policy := pod.Spec.RestartPolicy
	switch {
	case st.failedInit:
		status.Phase = v1.PodFailed
	case !initialized || waiting > 0:
		status.Phase = v1.PodPending
	case running > 0:
		status.Phase = v1.PodRunning
	case succeeded == n && policy != v1.RestartPolicyAlways:
		status.Phase = v1.PodSucceeded
	case failed > 0 && policy == v1.RestartPolicyNever:
		status.Phase = v1.PodFailed
	case succeeded+failed == n && policy == v1.RestartPolicyOnFailure && failed == 0:
		status.Phase = v1.PodSucceeded
	default:
		status.Phase = v1.PodRunning // restarts pending
	}

	ready := running == n && n > 0
	for _, cs := range status.ContainerStatuses {
		if !cs.Ready {
			ready = false
		}
	}
	cond := func(t v1.PodConditionType, ok bool, reason string) v1.PodCondition {
		s := v1.ConditionFalse
		if ok {
			s = v1.ConditionTrue
			reason = ""
		}
		return v1.PodCondition{Type: t, Status: s, Reason: reason}
	}
	var notReady []string
	for _, cs := range status.ContainerStatuses {
		if !cs.Ready {
			notReady = append(notReady, cs.Name)
		}
	}
	msg := ""
	if len(notReady) > 0 {
		msg = "containers with unready status: [" + strings.Join(notReady, " ") + "]"
	}
	status.Conditions = []v1.PodCondition{
		cond(v1.PodScheduled, true, ""),
		cond(v1.PodInitialized, initialized, "ContainersNotInitialized"),
		cond(v1.ContainersReady, ready, "ContainersNotReady"),
		cond(v1.PodReady, ready, "ContainersNotReady"),
	}
	if msg != "" {
		status.Conditions[2].Message = msg
		status.Conditions[3].Message = msg
	}
	return status
}
