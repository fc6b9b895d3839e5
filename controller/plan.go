package controller

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/eviction"
	"github.com/berth-dev/berth/images"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podconfig"
	"github.com/berth-dev/berth/prober"
	"github.com/berth-dev/berth/restarts"
	"github.com/berth-dev/berth/runtime"
)

// PlanInput is everything a plan depends on, read once per reconcile.
type PlanInput struct {
	Key string
	// Pod is the desired pod; nil when its source no longer declares it.
	Pod *model.Pod
	// Containers are the pod key's containers as the store observed them.
	Containers []*model.Container
	// Backoff is the retry state of Pod's incarnation.
	Backoff Backoffs
	// Unhealthy names the probe that condemned a running container, by ID.
	Unhealthy map[string]prober.Kind
	// Started holds the running containers whose startup probe succeeded,
	// by ID (a sidecar with a startup probe gates the next init container
	// until then).
	Started map[string]bool
	// Synced reports, per source named by a container, whether that source
	// completed a sync since berth started (so its orphans may go).
	Synced map[string]bool
	Now    time.Time
	// Evicted is the eviction message of Pod's incarnation, recorded by the
	// housekeeping loop (its emptyDir exceeded its sizeLimit); "" if none.
	Evicted string
}

// Backoffs is the retry state of one pod incarnation, keyed by container
// name (model.SandboxName for the sandbox), as the trackers held it.
type Backoffs struct {
	Policy restarts.Backoff
	Crash  map[string]restarts.CrashState
	// StartRetry is when a container whose start failed may be tried again.
	StartRetry map[string]time.Time
	Pulls      map[string]PullState
}

// PullState is the image pull of one container, as images tracks it.
type PullState = images.State

// Plan is what one reconcile of a pod does. Kills of running containers run
// in the background; everything else runs on the worker, in field order:
// the other kills, the sandbox, then the starts.
type Plan struct {
	Kill []Kill
	// Forget lists pod UIDs whose trackers and volumes go once Kill is done.
	Forget []string
	Events []PlanEvent
	// CreateSandbox creates and starts a new sandbox with this attempt
	// number; StartSandbox starts a created one. At most one is set.
	CreateSandbox *int
	StartSandbox  *model.Container
	// Sandbox is the running sandbox the starts join (nil: the new one).
	Sandbox *model.Container
	Start   []Start
	// Waiting holds status reasons of containers that wait, by name.
	Waiting      map[string]v1.ContainerStateWaiting
	RequeueAfter time.Duration
	// FailedInit: an init container failed for good (restartPolicy Never).
	FailedInit bool
	// Finished: the pod ended (see planEnded); nothing of it runs again.
	Finished bool
	// DeadlineExceeded: the pod ended as its activeDeadlineSeconds passed.
	DeadlineExceeded bool
	// Evicted is the message of the eviction that ends the pod now.
	Evicted string
	// Reclaim: the pod was evicted and nothing of it runs any more, so its
	// disk emptyDirs go (reclaimEmptyDirs), in the background.
	Reclaim bool
	// BackOffs are the exited containers waiting out a crash-loop delay.
	BackOffs []BackOff
}

// BackOff is a crash-loop wait: Instance, an exited instance of Container,
// is restarted Delay after it exited.
type BackOff struct {
	Container string
	Instance  string
	Delay     time.Duration
}

// Kill stops Container (when running) and removes it when Remove is set.
type Kill struct {
	Container *model.Container
	Remove    bool
	Reason    string
	// Order is the kill's turn (orderKills): the stops of one Order run
	// side by side, those of a higher Order once every lower one ended.
	Order int
	// Grace, when set, replaces the container's own grace period (an
	// eviction does not wait for the period a pod chose for itself).
	Grace time.Duration
}

// Start starts one container: Existing (a created one) or a new instance.
type Start struct {
	Spec     *v1.Container
	Init     bool
	Existing *model.Container
	Attempt  int
	// RestartCount is the count the new instance carries.
	RestartCount int
	// Restart is set when this start is a restart by policy; RanFor is
	// how long the instance it replaces ran (for the backoff reset).
	Restart bool
	RanFor  time.Duration
	Reason  string
}

// PlanEvent is an event the executor records about the pod.
type PlanEvent struct {
	Container, Type, Reason, Message string
}

// background reports whether the plan's kills include a stop, which waits
// for a process to end.
func (p *Plan) background() bool {
	for _, k := range p.Kill {
		if k.Container.Running() {
			return true
		}
	}
	return false
}

func (p *Plan) wait(name string, w v1.ContainerStateWaiting) {
	if p.Waiting == nil {
		p.Waiting = map[string]v1.ContainerStateWaiting{}
	}
	p.Waiting[name] = w
}

func (p *Plan) requeue(d time.Duration) { p.RequeueAfter = sooner(p.RequeueAfter, d) }

// sooner is the earlier of two requeue delays, where 0 means none.
func sooner(cur, d time.Duration) time.Duration {
	if d > 0 && (cur == 0 || d < cur) {
		return d
	}
	return cur
}

func (p *Plan) event(container, typ, reason, format string, args ...interface{}) {
	p.Events = append(p.Events, PlanEvent{Container: container, Type: typ, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// plan decides what to do about one pod, from what it declares and what
// runs, without any I/O: the kubelet's SyncPod as a function.
func plan(in PlanInput) Plan {
	var pl Plan
	if in.Pod == nil {
		pl = planDeleted(in)
	} else {
		pl = planPod(in)
	}
	orderKills(&pl)
	return pl
}

func planPod(in PlanInput) Plan {
	var pl Plan
	pod := in.Pod.Spec
	uid := string(pod.UID)
	byName, stale := groupByName(in.Containers, uid)
	if len(stale) > 0 && in.allSynced(stale) {
		// An older incarnation goes once its own source has synced (until
		// then it may still be the one its source wants), before the new
		// one takes its ports.
		for _, ct := range stale {
			pl.Kill = append(pl.Kill, Kill{Container: ct, Remove: true, Reason: "a replaced incarnation of the pod"})
		}
		pl.Forget = uids(stale)
		return pl
	}

	if planEnded(&in, &pl, byName) {
		planCollect(&in, &pl, byName)
		return pl
	}
	if !planSandbox(&in, &pl, byName) {
		return pl
	}
	if planInits(&in, &pl, byName) {
		for i := range pod.Spec.Containers {
			c := &pod.Spec.Containers[i]
			planContainer(&in, &pl, podContainer{c, false, byName[c.Name]})
		}
	}
	planCollect(&in, &pl, byName)
	return pl
}

func planDeleted(in PlanInput) Plan {
	var pl Plan
	if len(in.Containers) == 0 || !in.allSynced(in.Containers) {
		return pl // the store notifies the key when the source syncs
	}
	pl.event("", events.Normal, "Killing", "Stopping pod: removed from its source")
	for _, ct := range in.Containers {
		pl.Kill = append(pl.Kill, Kill{Container: ct, Remove: true, Reason: "pod removed from its source"})
	}
	pl.Forget = uids(in.Containers)
	return pl
}

func (in *PlanInput) allSynced(ctrs []*model.Container) bool {
	for _, ct := range ctrs {
		if !in.Synced[ct.Source] {
			return false
		}
	}
	return true
}

func uids(ctrs []*model.Container) []string {
	seen := map[string]bool{}
	var out []string
	for _, ct := range ctrs {
		if ct.PodUID != "" && !seen[ct.PodUID] {
			seen[ct.PodUID] = true
			out = append(out, ct.PodUID)
		}
	}
	return out
}

// evictedReason is the status reason and event reason of an evicted pod.
const evictedReason = eviction.Reason

// evictionGrace is how long an evicted pod's containers get to stop: the
// kubelet's immediate eviction (1 s) raised to berth's minimum period, never
// the period the pod chose for itself, which may be unbounded.
const evictionGrace = model.MinGracePeriod

// deadlineMessage is the kubelet's status message (and event) of a pod
// whose activeDeadlineSeconds passed.
const deadlineMessage = "Pod was active on the node longer than the specified deadline"

// specHash identifies the pod's spec, for its recorded terminal phase.
func specHash(pod *v1.Pod) string { return podconfig.SpecHash(pod) }

// terminal reports whether p ended in a phase recorded for its current spec.
func terminal(p *model.Pod) bool {
	return p.Terminal != "" && p.TerminalSpec == specHash(p.Spec)
}

// planEnded reports whether the pod has ended, as the kubelet decides it:
// its terminal phase is recorded for this spec; its restart policy starts
// nothing again (finishedByPolicy); or its activeDeadlineSeconds passed,
// counted from SeenAt (status.startTime), which fails it with
// DeadlineExceeded (until then the plan requeues at the deadline); or the
// housekeeping loop found an emptyDir over its sizeLimit (in.Evicted),
// which fails it as Evicted. An ended pod gets no new sandbox and starts
// nothing; whatever of it still runs, its sandbox included, is stopped and
// kept (its IP and host ports are freed, its containers stay for status and
// logs). Once nothing of an evicted pod runs, its emptyDirs are reclaimed.
func planEnded(in *PlanInput, pl *Plan, byName map[string][]*model.Container) bool {
	reason := "the pod has ended"
	switch {
	case terminal(in.Pod), finishedByPolicy(in, pl, byName):
	case deadlineExceeded(in, pl):
		pl.DeadlineExceeded = true
		pl.event("", events.Normal, "DeadlineExceeded", deadlineMessage)
		reason = "DeadlineExceeded"
	case in.Evicted != "":
		pl.Evicted = in.Evicted
		pl.event("", events.Warning, evictedReason, "%s", in.Evicted)
		reason = evictedReason
	default:
		return false
	}
	pl.Finished = true
	var grace time.Duration
	if pl.Evicted != "" {
		grace = evictionGrace
	}
	for _, list := range byName {
		for _, ct := range list {
			if ct.Running() {
				pl.Kill = append(pl.Kill, Kill{Container: ct, Reason: reason, Grace: grace})
			}
		}
	}
	pl.Reclaim = in.Evicted != "" && !pl.background()
	return true
}

// finishedByPolicy reports whether the restart policy starts none of the
// pod's containers again: under Never, once a regular init container failed
// (FailedInit), every app container exited, or its sandbox is gone after
// any container ran; under OnFailure, once every app container succeeded.
// Sidecars do not count: they restart by their own policy, and stop once
// the pod finished (KEP-753). An edited spec (an instance or the sandbox of
// an older spec) runs again.
func finishedByPolicy(in *PlanInput, pl *Plan, byName map[string][]*model.Container) bool {
	pod := in.Pod.Spec
	policy := pod.Spec.RestartPolicy
	if policy == v1.RestartPolicyAlways {
		return false
	}
	sandboxes := byName[model.SandboxName]
	if len(sandboxes) > 0 && sandboxes[0].Hash != podconfig.SandboxHash(pod) {
		return false
	}
	latest := map[string]*model.Container{}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if inst := byName[list[i].Name]; len(inst) > 0 {
				if inst[0].Hash != podconfig.ContainerHash(pod, &list[i]) {
					return false
				}
				latest[list[i].Name] = inst[0]
			}
		}
	}
	ran := len(latest) > 0
	if policy == v1.RestartPolicyNever {
		for i := range pod.Spec.InitContainers {
			ic := &pod.Spec.InitContainers[i]
			if ct := latest[ic.Name]; ct != nil && !model.IsSidecar(ic) && exited(ct) && ct.ExitCode != 0 {
				pl.FailedInit = true
				return true
			}
		}
		if ran && (len(sandboxes) == 0 || !(sandboxes[0].Running() || sandboxes[0].State == model.StateCreated)) {
			return true
		}
	}
	for _, c := range pod.Spec.Containers {
		ct := latest[c.Name]
		if ct == nil || !exited(ct) || (policy == v1.RestartPolicyOnFailure && ct.ExitCode != 0) {
			return false
		}
	}
	return true
}

// deadlineExceeded reports whether the pod's activeDeadlineSeconds passed,
// and requeues the plan at the deadline until then.
func deadlineExceeded(in *PlanInput, pl *Plan) bool {
	d := in.Pod.Spec.Spec.ActiveDeadlineSeconds
	if d == nil || in.Pod.SeenAt.IsZero() {
		return false
	}
	at := in.Pod.SeenAt.Add(time.Duration(*d) * time.Second)
	if in.Now.Before(at) {
		pl.requeue(at.Sub(in.Now))
		return false
	}
	return true
}

// planSandbox sets pl.Sandbox (or a sandbox step) and reports whether the
// pod's containers may be planned now. A sandbox missing, exited or with
// changed pod-level networking is replaced. An edit kills the whole pod
// first and starts it afresh. A sandbox that died takes its running
// containers with it, as in the kubelet: they are stopped but kept, so their
// restart policy decides and their counts go on (a pod that ended gets no
// new sandbox: planEnded comes first). Failed starts back off.
func planSandbox(in *PlanInput, pl *Plan, byName map[string][]*model.Container) bool {
	pod := in.Pod.Spec
	sandboxes := byName[model.SandboxName]
	want := podconfig.SandboxHash(pod)
	retry := in.Backoff.StartRetry[model.SandboxName]
	if len(sandboxes) > 0 && sandboxes[0].Hash == want {
		sb := sandboxes[0]
		switch {
		case sb.Running():
			pl.Sandbox = sb
			return true
		case sb.State == model.StateCreated:
			if in.Now.Before(retry) {
				pl.requeue(retry.Sub(in.Now))
				return false
			}
			pl.StartSandbox = sb
			return true
		}
	}
	edited := len(sandboxes) > 0 && sandboxes[0].Hash != want
	for name, list := range byName {
		for _, ct := range list {
			switch {
			case name == model.SandboxName:
				pl.Kill = append(pl.Kill, Kill{Container: ct, Remove: true, Reason: "pod sandbox replaced"})
			case edited:
				pl.Kill = append(pl.Kill, Kill{Container: ct, Remove: true, Reason: "pod-level networking edited"})
			case ct.State == model.StateCreated:
				pl.Kill = append(pl.Kill, Kill{Container: ct, Remove: true, Reason: "its pod sandbox is gone"})
			case ct.Running():
				// Kept, exited, for its restart policy, logs and count.
				pl.Kill = append(pl.Kill, Kill{Container: ct, Reason: "its pod sandbox is gone"})
			}
		}
	}
	if len(pl.Kill) > 0 && (edited || pl.background()) {
		pl.event("", events.Normal, "SandboxChanged", "Pod sandbox changed, it will be killed and re-created")
	}
	if pl.background() {
		return false // the pod is rebuilt once its containers stopped
	}
	if in.Now.Before(retry) {
		pl.requeue(retry.Sub(in.Now))
		return false
	}
	attempt := 0
	if len(sandboxes) > 0 {
		attempt = sandboxes[0].Attempt + 1
	}
	pl.CreateSandbox = &attempt
	if edited {
		return false // an edit starts the pod afresh, after the removals
	}
	return true
}

// sandboxID is the ID of the sandbox the plan's starts join; "" for one the
// plan creates.
func (pl *Plan) sandboxID() string {
	switch {
	case pl.Sandbox != nil:
		return pl.Sandbox.ID
	case pl.StartSandbox != nil:
		return pl.StartSandbox.ID
	}
	return ""
}

// podContainer is one container of the pod's spec with its observed
// instances, newest first.
type podContainer struct {
	spec      *v1.Container
	init      bool
	instances []*model.Container
}

// latest is the newest instance, or nil.
func (pc podContainer) latest() *model.Container {
	if len(pc.instances) == 0 {
		return nil
	}
	return pc.instances[0]
}

// planInits plans the init containers as the kubelet's
// computeInitContainerActions, and reports whether the pod is initialized:
// its app containers may run. They start in order: the next starts once a
// regular init container exited 0, or once a sidecar started (runs, and
// passed its startup probe if it has one). Those before the frontier
// (initFrontier) initialized the pod already: a regular one is left alone,
// a sidecar is kept running (restarted by its own policy, Always).
func planInits(in *PlanInput, pl *Plan, byName map[string][]*model.Container) bool {
	inits := in.Pod.Spec.Spec.InitContainers
	frontier := initFrontier(in, pl, byName)
	for i := range inits {
		ic := &inits[i]
		pc := podContainer{ic, true, byName[ic.Name]}
		switch sidecar := model.IsSidecar(ic); {
		case i < frontier && sidecar:
			planContainer(in, pl, pc)
		case i < frontier:
			planInitRan(in, pl, pc)
		case sidecar:
			if !planContainer(in, pl, pc) {
				return false
			}
		default:
			if !planInit(in, pl, pc) {
				return false
			}
		}
	}
	return true
}

// initFrontier is the index of the last init container that ran in the
// current sandbox (0 when none did), or their count once an app container
// was created there: every init container before it did its part.
func initFrontier(in *PlanInput, pl *Plan, byName map[string][]*model.Container) int {
	sb := pl.sandboxID()
	inSandbox := func(name string) *model.Container {
		if list := byName[name]; sb != "" && len(list) > 0 && list[0].Labels[runtime.LabelSandbox] == sb {
			return list[0]
		}
		return nil
	}
	spec := &in.Pod.Spec.Spec
	for _, c := range spec.Containers {
		if ct := inSandbox(c.Name); ct != nil && (ct.Running() || ct.State == model.StateCreated) {
			return len(spec.InitContainers)
		}
	}
	for i := len(spec.InitContainers) - 1; i >= 0; i-- {
		if inSandbox(spec.InitContainers[i].Name) != nil {
			return i
		}
	}
	return 0
}

// planInitRan leaves a regular init container that did its part alone,
// unless an instance of another spec still runs (a sidecar edited into a
// regular init container): it is stopped.
func planInitRan(in *PlanInput, pl *Plan, pc podContainer) {
	if ct := pc.latest(); ct != nil && ct.Running() && ct.Hash != podconfig.ContainerHash(in.Pod.Spec, pc.spec) {
		pl.Kill = append(pl.Kill, Kill{Container: ct, Reason: "container spec changed"})
	}
}

// planInit plans one regular init container and reports whether it is done
// (exited 0 in the current sandbox).
func planInit(in *PlanInput, pl *Plan, pc podContainer) bool {
	latest := pc.latest()
	if sb := pl.sandboxID(); latest != nil && (sb == "" || latest.Labels[runtime.LabelSandbox] != sb) {
		latest = nil // it ran in another sandbox
	}
	switch {
	case latest == nil:
		planStart(in, pl, Start{Spec: pc.spec, Init: true, Attempt: nextAttempt(pc.instances), Reason: "init container not run in this sandbox"})
		return false
	case latest.Running():
		return false
	case latest.State == model.StateCreated:
		planStartCreated(in, pl, pc)
		return false
	case latest.ExitCode == 0:
		return true
	}
	policy := in.Pod.Spec.Spec.RestartPolicy
	if policy == v1.RestartPolicyAlways {
		policy = v1.RestartPolicyOnFailure // init containers never restart on success
	}
	planRestart(in, pl, pc, policy)
	if policy == v1.RestartPolicyNever {
		pl.FailedInit = true
	}
	return false
}

// planContainer plans an app container or a sidecar, and reports whether it
// has started: it runs in the current sandbox and passed its startup probe,
// if it has one. An app container restarts by the pod's restart policy, a
// sidecar by its own, Always.
func planContainer(in *PlanInput, pl *Plan, pc podContainer) bool {
	ctr, latest := pc.spec, pc.latest()
	if latest == nil {
		planStart(in, pl, Start{Spec: ctr, Init: pc.init, Reason: "not running"})
		return false
	}
	sb := pl.sandboxID()
	switch {
	case latest.Hash != podconfig.ContainerHash(in.Pod.Spec, ctr):
		if latest.Running() {
			// Stopped first (it may hold the pod's ports), then replaced.
			pl.Kill = append(pl.Kill, Kill{Container: latest, Reason: "container spec changed"})
			return false
		}
		// An edit replaces the container: the old spec's instance goes.
		pl.Kill = append(pl.Kill, Kill{Container: latest, Remove: true, Reason: "container spec changed"})
		planStart(in, pl, Start{Spec: ctr, Init: pc.init, Attempt: latest.Attempt + 1, RestartCount: latest.RestartCount, Reason: "container spec changed"})
	case latest.Running() && (sb == "" || latest.Labels[runtime.LabelSandbox] != sb):
		// Replaced (not a crash: no restart policy, no backoff).
		pl.Kill = append(pl.Kill, Kill{Container: latest, Remove: true, Reason: "container runs in a replaced sandbox"})
	case latest.Running():
		if kind, bad := in.Unhealthy[latest.ID]; bad {
			pl.event(ctr.Name, events.Warning, "Unhealthy", "%s probe failed", kind)
			pl.event(ctr.Name, events.Normal, "Killing", "Container %s failed %s probe, will be restarted", ctr.Name, kind)
			pl.Kill = append(pl.Kill, Kill{Container: latest, Reason: string(kind) + " probe failed"})
			return false
		}
		return ctr.StartupProbe == nil || in.Started[latest.ID]
	case latest.State == model.StateCreated:
		planStartCreated(in, pl, pc)
	default:
		policy := in.Pod.Spec.Spec.RestartPolicy
		if pc.init {
			policy = v1.RestartPolicyAlways
		}
		planRestart(in, pl, pc, policy)
	}
	return false
}

func nextAttempt(instances []*model.Container) int {
	if len(instances) > 0 {
		return instances[0].Attempt + 1
	}
	return 0
}

// planRestart applies the restart policy to a container whose latest
// instance exited.
func planRestart(in *PlanInput, pl *Plan, pc podContainer, policy v1.RestartPolicy) {
	ctr, latest := pc.spec, pc.latest()
	crash := in.Backoff.Crash[ctr.Name]
	action, delay, reason := restarts.Decide(in.Backoff.Policy, crash, policy, restarts.Exit{Code: latest.ExitCode, Started: latest.StartedAt, Finished: latest.FinishedAt}, in.Now)
	switch action {
	case restarts.ActionNone:
		return
	case restarts.ActionWait:
		pl.event(ctr.Name, events.Warning, "BackOff", "Back-off restarting failed container %s", ctr.Name)
		pl.wait(ctr.Name, v1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", crash.Delay, ctr.Name, in.Key)})
		pl.requeue(delay)
		pl.BackOffs = append(pl.BackOffs, BackOff{Container: ctr.Name, Instance: latest.ID, Delay: crash.Delay})
		return
	}
	var ran time.Duration
	if !latest.StartedAt.IsZero() && latest.FinishedAt.After(latest.StartedAt) {
		ran = latest.FinishedAt.Sub(latest.StartedAt)
	}
	planStart(in, pl, Start{Spec: ctr, Init: pc.init, Attempt: nextAttempt(pc.instances), RestartCount: latest.RestartCount + 1,
		Restart: true, RanFor: ran, Reason: fmt.Sprintf("exited %d: %s", latest.ExitCode, reason)})
}

// planStartCreated starts the latest instance, left created, once earlier
// failed starts have waited out their backoff.
func planStartCreated(in *PlanInput, pl *Plan, pc podContainer) {
	if startBackoff(in, pl, pc.spec.Name) {
		return
	}
	ct := pc.latest()
	pl.Start = append(pl.Start, Start{Spec: pc.spec, Init: pc.init, Existing: ct, Attempt: ct.Attempt, RestartCount: ct.RestartCount, Reason: "created, not started"})
}

// planStart adds s unless the container waits: after failed starts, or for
// its image (a pull in flight, or a failed pull backing off).
func planStart(in *PlanInput, pl *Plan, s Start) {
	name := s.Spec.Name
	if startBackoff(in, pl, name) {
		return
	}
	ps := in.Backoff.Pulls[name]
	switch {
	case ps.Pulling:
		msg := fmt.Sprintf("Pulling image %q", s.Spec.Image)
		if ps.Progress != "" {
			msg += ": " + ps.Progress
		}
		pl.wait(name, v1.ContainerStateWaiting{Reason: "ContainerCreating", Message: msg})
		return
	case in.Now.Before(ps.RetryAt):
		reason := "ImagePullBackOff"
		msg := fmt.Sprintf("Back-off pulling image %q", s.Spec.Image)
		switch {
		case ps.NeverPull:
			reason, msg = "ErrImageNeverPull", ps.Err
		case !ps.Reported:
			reason, msg = "ErrImagePull", ps.Err
		}
		pl.wait(name, v1.ContainerStateWaiting{Reason: reason, Message: msg})
		pl.requeue(ps.RetryAt.Sub(in.Now))
		return
	}
	pl.Start = append(pl.Start, s)
}

// startBackoff reports whether container name must still wait after failed
// starts, recording RunContainerError meanwhile.
func startBackoff(in *PlanInput, pl *Plan, name string) bool {
	at := in.Backoff.StartRetry[name]
	if !in.Now.Before(at) {
		return false
	}
	pl.wait(name, v1.ContainerStateWaiting{Reason: "RunContainerError",
		Message: fmt.Sprintf("back-off %s restarting container %s that failed to start", at.Sub(in.Now).Round(time.Millisecond), name)})
	pl.requeue(at.Sub(in.Now))
	return true
}

// planCollect removes containers the spec no longer names, running
// instances older than the newest (duplicates), and all but the most recent
// exited instance of each pod container.
func planCollect(in *PlanInput, pl *Plan, byName map[string][]*model.Container) {
	wanted := map[string]bool{model.SandboxName: true}
	for _, ct := range in.Pod.Spec.Spec.InitContainers {
		wanted[ct.Name] = true
	}
	for _, ct := range in.Pod.Spec.Spec.Containers {
		wanted[ct.Name] = true
	}
	killed := map[string]bool{}
	for _, k := range pl.Kill {
		killed[k.Container.ID] = true
	}
	for name, list := range byName {
		keptExited := false
		for i, ct := range list {
			reason := ""
			switch {
			case !wanted[name]:
				reason = "container no longer in the pod spec"
			case i == 0:
			case ct.Running():
				// Made while the store missed a container (e.g. around a
				// dockerd restart).
				reason = "a second running instance of container " + name
			case !keptExited && name != model.SandboxName:
				keptExited = true // the "previous" instance, for logs and status
			default:
				reason = "an older exited instance of container " + name
			}
			if i == 0 && (ct.State == model.StateExited || ct.State == model.StateDead) {
				// The newest has ended: it is the previous instance. One
				// only created (not started yet) leaves that place to the
				// exited one before it.
				keptExited = true
			}
			if reason != "" && !killed[ct.ID] {
				pl.Kill = append(pl.Kill, Kill{Container: ct, Remove: true, Reason: reason})
			}
		}
	}
}

// groupByName groups the containers of pod incarnation uid by container
// name, newest instance first; containers of other incarnations are stale.
func groupByName(ctrs []*model.Container, uid string) (byName map[string][]*model.Container, stale []*model.Container) {
	byName = map[string][]*model.Container{}
	for _, ct := range ctrs {
		if ct.PodUID != uid {
			stale = append(stale, ct)
			continue
		}
		byName[ct.Name] = append(byName[ct.Name], ct)
	}
	for _, list := range byName {
		newestFirst(list)
	}
	return byName, stale
}
