package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podconfig"
	"github.com/berth-dev/berth/prober"
	"github.com/berth-dev/berth/runtime"
)

// Termination message limits, as the kubelet's
// (MaxContainerTerminationMessageLength, ...LogLength, ...LogLines).
const (
	maxTerminationMessage  = 4096
	maxTerminationLogBytes = 2048
	terminationLogLines    = 80
)

// podState is what one reconcile learned, for the status it writes.
type podState struct {
	waiting    map[string]v1.ContainerStateWaiting // by container name
	failedInit bool
	// deadlineExceeded: the plan ended the pod at its activeDeadlineSeconds.
	deadlineExceeded bool
	// evicted is the message of the eviction the plan ended the pod with.
	evicted string
	probe   func(id string, kind prober.Kind) prober.Result
	// imageID resolves an image reference for containers whose row lacks
	// the image's ID (rows built from events).
	imageID func(ref string) (string, bool)
	// nodeIP is status.hostIP, and podIP under hostNetwork.
	nodeIP string
	// now stamps the conditions whose status flipped.
	now time.Time
}

// writeStatus records the pod's status, computed from byName (its
// containers as currentContainers returns them), what this reconcile
// learned and the pod's row as stored (its previous status, terminal phase
// and termination messages, to which messages, newly read, are added). A
// terminal phase is recorded for the pod's spec. It records the pod start
// latency too.
func (c *Controller) writeStatus(p *model.Pod, st *podState, byName map[string][]*model.Container, messages map[string]string) {
	now := c.cfg.Clock.Now()
	st.now, st.nodeIP = now, c.cfg.NodeInfo.IP
	var observed, changed bool
	var was, is v1.PodStatus
	_, _ = c.store.UpdatePod(p.Key, func(cur *model.Pod) bool {
		if cur.Spec.UID != p.Spec.UID {
			return false
		}
		before := *cur
		defer func() { was, is = before.Status, cur.Status }()
		cur.TerminationMessages = keptMessages(cur.TerminationMessages, messages, byName)
		status := computeStatus(cur, byName, st)
		cur.Status = status
		if (status.Phase == v1.PodSucceeded || status.Phase == v1.PodFailed) && !terminal(cur) {
			cur.Terminal, cur.TerminalSpec = status.Phase, specHash(cur.Spec)
		}
		if allRunning(&status) && cur.StartedAt.IsZero() {
			cur.StartedAt = now
			observed = true
		}
		changed = statusChanged(&before, cur)
		return changed
	})
	if changed {
		c.life.status(p.Key, string(p.Spec.UID), &was, &is, p.SeenAt, now)
	}
	if observed {
		c.cfg.Metrics.PodStarted(now.Sub(p.SeenAt))
	}
}

// statusChanged reports whether writeStatus changed what the pod's row
// records of its status. Without a change nothing is written: a write holds
// the store's lock and wakes every watcher.
func statusChanged(old, cur *model.Pod) bool {
	return old.Terminal != cur.Terminal || old.TerminalSpec != cur.TerminalSpec ||
		!old.StartedAt.Equal(cur.StartedAt) ||
		!maps.Equal(old.TerminationMessages, cur.TerminationMessages) ||
		!apiequality.Semantic.DeepEqual(old.Status, cur.Status)
}

func allRunning(s *v1.PodStatus) bool {
	if s.Phase != v1.PodRunning {
		return false
	}
	for _, cs := range s.ContainerStatuses {
		if cs.State.Running == nil {
			return false
		}
	}
	return true
}

// keptMessages is old with added, restricted to containers still in byName.
func keptMessages(old, added map[string]string, byName map[string][]*model.Container) map[string]string {
	out := map[string]string{}
	for _, list := range byName {
		for _, ct := range list {
			if m, ok := added[ct.ID]; ok {
				out[ct.ID] = m
			} else if m, ok := old[ct.ID]; ok {
				out[ct.ID] = m
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// newTerminationMessages reads the termination messages of the exited
// instances of pod's containers that status shows (the latest two of
// each) and whose message the pod's row does not hold yet, by ID.
func (c *Controller) newTerminationMessages(ctx context.Context, key string, pod *v1.Pod, byName map[string][]*model.Container) map[string]string {
	var known map[string]string
	if cur, _ := c.store.Pod(nil, key); cur != nil && cur.Spec.UID == pod.UID {
		known = cur.TerminationMessages
	}
	out := map[string]string{}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			inst := byName[list[i].Name]
			for _, ct := range inst[:min(2, len(inst))] {
				if _, ok := known[ct.ID]; ok || !exited(ct) {
					continue
				}
				out[ct.ID] = c.terminationMessage(ctx, ct, &list[i])
			}
		}
	}
	return out
}

func exited(ct *model.Container) bool { return !ct.Running() && ct.State != model.StateCreated }

// terminationMessage is what exited container ct of spec ctr left, as the
// kubelet reads it: the end (at most 4096 bytes) of the file bound at its
// terminationMessagePath; under FallbackToLogsOnError, when that is empty
// and the container failed (and did run), the end of its logs instead.
func (c *Controller) terminationMessage(ctx context.Context, ct *model.Container, ctr *v1.Container) string {
	path := c.terminationLogPath(ct.PodUID, ct.Name, ct.Attempt)
	data, err := readTail(path, maxTerminationMessage)
	switch {
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return fmt.Sprintf("Error on reading termination log %s: %v", path, err)
	case len(data) > 0:
		return string(data)
	case ctr.TerminationMessagePolicy == v1.TerminationMessageFallbackToLogsOnError && ct.ExitCode != 0 && ct.Error == "":
		return c.logTail(ctx, ct.ID)
	}
	return ""
}

// readTail reads the last max bytes of the file at path.
func readTail(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		if _, err := f.Seek(-max, io.SeekEnd); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// logTail is the end of container id's last 80 log lines, at most 2048
// bytes.
func (c *Controller) logTail(ctx context.Context, id string) string {
	rc, err := c.rt.Logs(ctx, id, runtime.LogOptions{TailLines: terminationLogLines})
	if err != nil {
		return fmt.Sprintf("Error on reading termination message from logs: %v", err)
	}
	defer rc.Close()
	var tail []byte
	buf := make([]byte, 8192)
	for {
		n, err := rc.Read(buf)
		tail = append(tail, buf[:n]...)
		if len(tail) > maxTerminationLogBytes {
			tail = append(tail[:0], tail[len(tail)-maxTerminationLogBytes:]...)
		}
		if errors.Is(err, io.EOF) {
			return string(tail)
		}
		if err != nil {
			return fmt.Sprintf("Error on reading termination message from logs: %v", err)
		}
	}
}

func containerID(ct *model.Container) string { return "docker://" + ct.ID }

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
// first. A container without instances nor waiting reason shows
// defaultWaiting (the kubelet's ContainerCreating, or PodInitializing in a
// pod with init containers). Started is set for every container, as the
// kubelet's prober does; a regular init container is ready once it
// succeeded, a sidecar as an app container: while it runs, started, and
// passes its readiness probe.
func containerStatus(ctr *v1.Container, instances []*model.Container, st *podState, messages map[string]string, init bool, defaultWaiting string) v1.ContainerStatus {
	started := false
	cs := v1.ContainerStatus{Name: ctr.Name, Image: ctr.Image, Started: &started}
	if w, ok := st.waiting[ctr.Name]; ok {
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
	cs.ContainerID = containerID(latest)
	cs.ImageID = latest.ImageID
	if cs.ImageID == "" && st.imageID != nil {
		cs.ImageID, _ = st.imageID(latest.Image)
	}
	if len(instances) > 1 && !instances[1].Running() {
		cs.LastTerminationState.Terminated = terminated(instances[1], messages[instances[1].ID])
	}
	probe := func(kind prober.Kind) bool { return st.probe != nil && st.probe(latest.ID, kind) == prober.Success }
	switch {
	case latest.Running():
		cs.State = v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.Time{Time: latest.StartedAt}}}
		started = ctr.StartupProbe == nil || probe(prober.Startup)
		cs.Ready = (!init || model.IsSidecar(ctr)) && started && (ctr.ReadinessProbe == nil || probe(prober.Readiness))
	case cs.State.Waiting != nil:
		// A backoff or error reason wins; the last run is history.
		cs.LastTerminationState.Terminated = terminated(latest, messages[latest.ID])
	case latest.State == model.StateCreated:
		cs.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
	default:
		cs.State.Terminated = terminated(latest, messages[latest.ID])
		cs.Ready = init && !model.IsSidecar(ctr) && latest.ExitCode == 0
	}
	return cs
}

// computeStatus derives the status of pod row p the way the kubelet does
// for the same containers: container statuses, phase (getPhase; a phase
// recorded as terminal for p's spec stays, and an exceeded deadline or an
// eviction fails the pod), conditions (whose lastTransitionTime is p.Status's while their
// status holds), addresses, QoS class and start time. It does no I/O.
func computeStatus(p *model.Pod, byName map[string][]*model.Container, st *podState) v1.PodStatus {
	pod, prev := p.Spec, &p.Status
	ended := terminal(p)
	defaultWaiting := "ContainerCreating"
	if len(pod.Spec.InitContainers) > 0 {
		defaultWaiting = "PodInitializing"
	}
	status := v1.PodStatus{QOSClass: podconfig.QOSClass(pod), StartTime: &metav1.Time{Time: p.SeenAt}}
	statuses := func(ctrs []v1.Container, init bool, old []v1.ContainerStatus) []v1.ContainerStatus {
		var out []v1.ContainerStatus
		for i := range ctrs {
			inst := byName[ctrs[i].Name]
			cs := containerStatus(&ctrs[i], inst, st, p.TerminationMessages, init, defaultWaiting)
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
	if sb := byName[model.SandboxName]; !pod.Spec.HostNetwork && anyRunning(sb) && sandboxIP(sb) == "" {
		// Nothing is ready to serve before the pod has an address: the
		// kubelet knows it before any container starts; berth asks for it
		// beside the starts, and the pod is reconciled again once known.
		for _, list := range [][]v1.ContainerStatus{status.InitContainerStatuses, status.ContainerStatuses} {
			for i := range list {
				list[i].Ready = false
			}
		}
	}

	status.Phase = podPhase(pod, &status, st.failedInit)
	switch {
	case ended:
		status.Phase = p.Terminal
	case st.deadlineExceeded:
		status.Phase, status.Reason, status.Message = v1.PodFailed, "DeadlineExceeded", deadlineMessage
	case st.evicted != "":
		status.Phase, status.Reason, status.Message = v1.PodFailed, evictedReason, st.evicted
	}
	if status.Reason == "" && status.Phase == prev.Phase {
		// The reason and message of a phase stay with it.
		status.Reason, status.Message = prev.Reason, prev.Message
	}
	status.Conditions = podConditions(pod, &status, byName[model.SandboxName], prev.Conditions, st.now)

	if st.nodeIP != "" {
		status.HostIP = st.nodeIP
		status.HostIPs = []v1.HostIP{{IP: st.nodeIP}}
	}
	ip := sandboxIP(byName[model.SandboxName])
	if pod.Spec.HostNetwork {
		ip = st.nodeIP
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
// its status holds; one that flips, or is new, gets now.
func podConditions(pod *v1.Pod, s *v1.PodStatus, sandboxes []*model.Container, prev []v1.PodCondition, now time.Time) []v1.PodCondition {
	sandboxReady := len(sandboxes) > 0 && sandboxes[0].Running() && sandboxes[0].Hash == podconfig.SandboxHash(pod) &&
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
