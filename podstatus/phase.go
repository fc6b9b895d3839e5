package podstatus

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/model"
)

// podPhase is the kubelet's getPhase over the container statuses of s
// (failedInit: the plan found an init container failed for good). A
// sidecar keeps the pod pending until it started, counts as running while
// it runs, and not at all once it stopped: a pod whose app containers
// completed is Succeeded or Failed once its sidecars are stopped.
func podPhase(pod *v1.Pod, s *v1.PodStatus, failedInit bool) v1.PodPhase {
	policy := pod.Spec.RestartPolicy
	pendingInit, failedInits := 0, 0
	var running, waiting, stopped, succeeded int
	for i, cs := range s.InitContainerStatuses {
		if model.IsSidecar(&pod.Spec.InitContainers[i]) {
			switch {
			case cs.State.Running != nil:
				if cs.Started == nil || !*cs.Started {
					pendingInit++
				}
				running++
			case cs.State.Terminated != nil, cs.LastTerminationState.Terminated != nil:
			default:
				pendingInit++
				waiting++
			}
			continue
		}
		switch {
		case cs.State.Running != nil:
			pendingInit++
		case cs.State.Terminated != nil:
			if cs.State.Terminated.ExitCode != 0 {
				failedInits++
			}
		case cs.LastTerminationState.Terminated != nil:
			if cs.LastTerminationState.Terminated.ExitCode != 0 {
				failedInits++
			}
		default:
			pendingInit++
		}
	}
	if failedInit || (failedInits > 0 && policy == v1.RestartPolicyNever) {
		return v1.PodFailed
	}
	regularStarted := false
	for _, cs := range s.ContainerStatuses {
		switch {
		case cs.State.Running != nil:
			running++
			regularStarted = true
		case cs.State.Terminated != nil:
			stopped++
			regularStarted = true
			if cs.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case cs.LastTerminationState.Terminated != nil:
			stopped++ // restarting
		default:
			waiting++
		}
	}
	switch {
	case (pendingInit > 0 && !regularStarted) || waiting > 0:
		return v1.PodPending
	case running > 0:
		return v1.PodRunning
	case stopped == 0:
		return v1.PodPending
	case policy == v1.RestartPolicyAlways:
		return v1.PodRunning
	case stopped == succeeded:
		return v1.PodSucceeded
	case policy == v1.RestartPolicyNever:
		return v1.PodFailed
	}
	return v1.PodRunning // OnFailure: restarting
}

// podConditions are the kubelet's conditions of a pod with status s, in
// its order: PodReadyToStartContainers (the sandbox of the pod's spec runs
// with its network set up), Initialized (a sidecar counts once started),
// Ready, ContainersReady (sidecars count, listed first), PodScheduled. A condition keeps its lastTransitionTime from prev while
// its status holds; one that flips, or is new, gets now. sandboxHash is
// the hash a sandbox of pod's spec carries.
func podConditions(pod *v1.Pod, s *v1.PodStatus, sandboxes []*model.Container, sandboxHash string, prev []v1.PodCondition, now time.Time) []v1.PodCondition {
	sandboxReady := len(sandboxes) > 0 && sandboxes[0].Running() && sandboxes[0].Hash == sandboxHash &&
		(pod.Spec.HostNetwork || sandboxes[0].IP != "")

	initialized := v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue}
	var incomplete []string
	for i, cs := range s.InitContainerStatuses {
		done := cs.Ready
		if model.IsSidecar(&pod.Spec.InitContainers[i]) {
			done = cs.Started != nil && *cs.Started
		}
		if !done {
			incomplete = append(incomplete, cs.Name)
		}
	}
	regularStarted := false
	for _, cs := range s.ContainerStatuses {
		if cs.State.Running != nil || cs.State.Terminated != nil {
			regularStarted = true
		}
	}
	switch {
	case s.Phase == v1.PodSucceeded:
		initialized.Reason = "PodCompleted"
	case !regularStarted && len(incomplete) > 0:
		initialized.Status, initialized.Reason = v1.ConditionFalse, "ContainersNotInitialized"
		initialized.Message = fmt.Sprintf("containers with incomplete status: %s", incomplete)
	}

	ready := v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionTrue}
	var unready []string
	for i, cs := range s.InitContainerStatuses {
		if model.IsSidecar(&pod.Spec.InitContainers[i]) && !cs.Ready {
			unready = append(unready, cs.Name)
		}
	}
	for _, cs := range s.ContainerStatuses {
		if !cs.Ready {
			unready = append(unready, cs.Name)
		}
	}
	switch {
	case s.Phase == v1.PodSucceeded:
		ready.Status, ready.Reason = v1.ConditionFalse, "PodCompleted"
	case s.Phase == v1.PodFailed:
		ready.Status, ready.Reason = v1.ConditionFalse, "PodFailed"
	case len(unready) > 0:
		ready.Status, ready.Reason = v1.ConditionFalse, "ContainersNotReady"
		ready.Message = fmt.Sprintf("containers with unready status: %s", unready)
	}
	podReady := ready
	podReady.Type = v1.PodReady

	conds := []v1.PodCondition{
		{Type: v1.PodReadyToStartContainers, Status: boolCondition(sandboxReady)},
		initialized,
		podReady,
		ready,
		{Type: v1.PodScheduled, Status: v1.ConditionTrue},
	}
	for i := range conds {
		conds[i].LastTransitionTime = metav1.Time{Time: now}
		for _, old := range prev {
			if old.Type == conds[i].Type && old.Status == conds[i].Status {
				conds[i].LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	return conds
}

func boolCondition(ok bool) v1.ConditionStatus {
	if ok {
		return v1.ConditionTrue
	}
	return v1.ConditionFalse
}
