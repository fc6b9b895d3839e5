package podstatus

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/model"
)

func containerID(ct *model.Container) string { return "docker://" + ct.ID }

// SandboxChangedMessage is the waiting message of a container while an edit
// replaces its pod's sandbox.
const SandboxChangedMessage = "pod sandbox changed, it will be killed and re-created"

// terminated is ct's terminated state; message, the container's termination
// message, follows the engine's error as in the kubelet.
func terminated(ct *model.Container, message string) *v1.ContainerStateTerminated {
	reason := "Completed"
	switch {
	case ct.OOMKilled:
		reason = "OOMKilled"
	case ct.ExitCode != 0:
		reason = "Error"
	}
	msg := ct.Error
	if message != "" {
		if msg != "" {
			msg += ": "
		}
		msg += message
	}
	return &v1.ContainerStateTerminated{
		ExitCode:    int32(ct.ExitCode),
		Reason:      reason,
		Message:     msg,
		StartedAt:   metav1.Time{Time: ct.StartedAt},
		FinishedAt:  metav1.Time{Time: ct.FinishedAt},
		ContainerID: containerID(ct),
	}
}

// containerStatus is the status of container ctr from its instances, newest
// first. While the pod's sandbox is replaced (replacing), the container waits
// for its new instance, as a new pod's would. A container without instances nor waiting reason shows
// defaultWaiting (the kubelet's ContainerCreating, or PodInitializing in a
// pod with init containers). Started is set for every container, as the
// kubelet's prober does; a regular init container is ready once it
// succeeded, a sidecar as an app container: while it runs, started, and
// passes its readiness probe.
func containerStatus(ctr *v1.Container, instances []*model.Container, in *Input, messages map[string]string, init bool, defaultWaiting string, replacing bool) v1.ContainerStatus {
	started := false
	cs := v1.ContainerStatus{Name: ctr.Name, Image: ctr.Image, Started: &started}
	if w, ok := in.Waiting[ctr.Name]; ok {
		w := w
		cs.State.Waiting = &w
	}
	if len(instances) == 0 {
		if cs.State.Waiting == nil {
			cs.State.Waiting = &v1.ContainerStateWaiting{Reason: defaultWaiting}
		}
		return cs
	}
	latest := instances[0]
	cs.RestartCount = int32(latest.RestartCount)
	if replacing {
		// The pod's sandbox is being replaced: its instances are of the
		// spec before the edit, stopping; the new ones are not made yet.
		// The containerID stays the old instance's while it runs (its
		// logs are served until it stops).
		if cs.State.Waiting == nil {
			cs.State.Waiting = &v1.ContainerStateWaiting{Reason: defaultWaiting, Message: SandboxChangedMessage}
		}
		switch {
		case latest.Running():
			cs.ContainerID, cs.ImageID = containerID(latest), latest.ImageID
			if len(instances) > 1 && !instances[1].Running() {
				cs.LastTerminationState.Terminated = terminated(instances[1], messages[instances[1].ID])
			}
		case latest.State != model.StateCreated:
			cs.LastTerminationState.Terminated = terminated(latest, messages[latest.ID])
		}
		return cs
	}
	cs.ContainerID = containerID(latest)
	cs.ImageID = latest.ImageID
	if cs.ImageID == "" && in.ImageID != nil {
		cs.ImageID, _ = in.ImageID(latest.Image)
	}
	if len(instances) > 1 && !instances[1].Running() {
		cs.LastTerminationState.Terminated = terminated(instances[1], messages[instances[1].ID])
	}
	passed := func(probe func(string) bool) bool { return probe != nil && probe(latest.ID) }
	switch {
	case latest.Running():
		cs.State = v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.Time{Time: latest.StartedAt}}}
		started = ctr.StartupProbe == nil || passed(in.Started)
		cs.Ready = (!init || model.IsSidecar(ctr)) && started && (ctr.ReadinessProbe == nil || passed(in.Ready))
	case cs.State.Waiting != nil:
		// A backoff or error reason wins; the last run is history.
		cs.LastTerminationState.Terminated = terminated(latest, messages[latest.ID])
	case latest.State == model.StateCreated:
		cs.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
	default:
		cs.State.Terminated = terminated(latest, messages[latest.ID])
		cs.Ready = init && !model.IsSidecar(ctr) && latest.ExitCode == 0
	}
	if in.ContainerHash != nil && (!init || model.IsSidecar(ctr)) && latest.Hash != in.ContainerHash(ctr) {
		cs.Ready = false // an edit replaces it (a completed init container is not run again)
	}
	return cs
}

// Compute derives the status of pod row p the way the kubelet does for the
// same containers (byName, newest first per name): container statuses,
// phase (getPhase; a phase recorded as terminal for p's spec stays, and
// in.FailReason fails the pod), conditions (whose lastTransitionTime is
// p.Status's while their status holds), addresses, QoS class and start
// time.
func Compute(p *model.Pod, byName map[string][]*model.Container, in *Input) v1.PodStatus {
	pod, prev := p.Spec, &p.Status
	ended := terminal(p, in.SpecHash)
	defaultWaiting := "ContainerCreating"
	if len(pod.Spec.InitContainers) > 0 {
		defaultWaiting = "PodInitializing"
	}
	status := v1.PodStatus{QOSClass: in.QOSClass, StartTime: &metav1.Time{Time: p.SeenAt}}
	sandboxes := byName[model.SandboxName]
	replacing := in.SandboxHash != "" && len(sandboxes) > 0 && sandboxes[0].Hash != in.SandboxHash
	statuses := func(ctrs []v1.Container, init bool, old []v1.ContainerStatus) []v1.ContainerStatus {
		var out []v1.ContainerStatus
		for i := range ctrs {
			inst := byName[ctrs[i].Name]
			cs := containerStatus(&ctrs[i], inst, in, p.TerminationMessages, init, defaultWaiting, replacing)
			if ended && len(inst) == 0 {
				// Gone from the engine after the pod ended: its last state
				// stays, as the kubelet keeps a terminated status.
				for _, o := range old {
					if o.Name == cs.Name && o.State.Terminated != nil {
						cs = *o.DeepCopy()
					}
				}
			}
			out = append(out, cs)
		}
		return out
	}
	status.InitContainerStatuses = statuses(pod.Spec.InitContainers, true, prev.InitContainerStatuses)
	status.ContainerStatuses = statuses(pod.Spec.Containers, false, prev.ContainerStatuses)
	if sb := byName[model.SandboxName]; !pod.Spec.HostNetwork && anyRunning(sb) && SandboxIP(sb) == "" {
		// Nothing is ready to serve before the pod has an address: the
		// kubelet knows it before any container starts; berth asks for it
		// beside the starts, and the pod is reconciled again once known.
		for _, list := range [][]v1.ContainerStatus{status.InitContainerStatuses, status.ContainerStatuses} {
			for i := range list {
				list[i].Ready = false
			}
		}
	}

	status.Phase = podPhase(pod, &status, in.FailedInit)
	switch {
	case ended:
		status.Phase = p.Terminal
	case in.FailReason != "":
		status.Phase, status.Reason, status.Message = v1.PodFailed, in.FailReason, in.FailMessage
	}
	if status.Reason == "" && status.Phase == prev.Phase {
		// The reason and message of a phase stay with it.
		status.Reason, status.Message = prev.Reason, prev.Message
	}
	status.Conditions = podConditions(pod, &status, byName[model.SandboxName], in.SandboxHash, prev.Conditions, in.Now)

	if in.NodeIP != "" {
		status.HostIP = in.NodeIP
		status.HostIPs = []v1.HostIP{{IP: in.NodeIP}}
	}
	ip := SandboxIP(byName[model.SandboxName])
	if pod.Spec.HostNetwork {
		ip = in.NodeIP
	}
	switch {
	case ip != "":
		status.PodIP, status.PodIPs = ip, []v1.PodIP{{IP: ip}}
	case !pod.Spec.HostNetwork && !anyRunning(byName[model.SandboxName]):
		// No sandbox can have an address: the last known stays, as the
		// kubelet keeps a dead pod's IPs.
		status.PodIP, status.PodIPs = prev.PodIP, append([]v1.PodIP(nil), prev.PodIPs...)
	}
	return status
}

func anyRunning(ctrs []*model.Container) bool {
	for _, ct := range ctrs {
		if ct.Running() {
			return true
		}
	}
	return false
}

// SandboxIP is the address of the running sandbox among sandboxes, or "".
func SandboxIP(sandboxes []*model.Container) string {
	for _, ct := range sandboxes {
		if ct.Running() && ct.IP != "" {
			return ct.IP
		}
	}
	return ""
}
