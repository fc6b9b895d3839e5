package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/prober"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

// labelSandbox names the sandbox container an app container joined, so a
// container left in a replaced sandbox is recognised.
const labelSandbox = "io.berth.sandbox.id"

// labelHostNetwork marks containers of hostNetwork pods.
const labelHostNetwork = "io.berth.hostnetwork"

// Reconcile makes the containers of pod key match its desired state. It reads
// desired and actual state from the store only (never from an event), acts on
// the runtime, writes what it did back to the store and records status.
func (c *Controller) Reconcile(ctx context.Context, key string) (Result, error) {
	if c.terminating.busy(key) {
		return Result{}, nil // the termination re-enqueues the key when done
	}
	pod, err := c.store.Pod(nil, key)
	if err != nil {
		return Result{}, err
	}
	ctrs, err := c.store.ContainersByPod(nil, key)
	if err != nil {
		return Result{}, err
	}
	if pod == nil {
		return c.reconcileDeleted(ctx, key, ctrs)
	}
	return c.reconcilePod(ctx, pod, ctrs)
}

// sourceSynced reports whether containers labelled with source may be
// collected: the source completed a sync since start, or it is no longer
// configured and every configured source has synced.
func (c *Controller) sourceSynced(name string) bool {
	src, _ := c.store.Source(nil, name)
	if src != nil {
		return src.Synced
	}
	all, _ := c.store.Sources(nil)
	if len(all) == 0 {
		return false
	}
	for _, s := range all {
		if !s.Synced {
			return false
		}
	}
	return true
}

func (c *Controller) reconcileDeleted(ctx context.Context, key string, ctrs []*store.Container) (Result, error) {
	c.probes.Sync(key, nil)
	if len(ctrs) == 0 {
		return Result{}, nil
	}
	for _, ct := range ctrs {
		if !c.sourceSynced(ct.Source) {
			return Result{}, nil // the store notifies us when the source syncs
		}
	}
	c.log.Info("removing pod", "pod", key, "containers", len(ctrs))
	c.event(key, "", events.Normal, "Killing", "Stopping pod: removed from its source")
	// Graceful stops may take the whole grace period: they run beside the
	// workers, and the key is looked at again when they are done.
	c.terminating.start(key, func() {
		if err := c.removePod(ctx, ctrs); err != nil && ctx.Err() == nil {
			c.log.Warn("removing pod failed", "pod", key, "err", err)
		}
		c.Enqueue(key)
	})
	return Result{}, nil
}

// removePod stops and removes ctrs (apps in parallel, sandboxes last) and
// forgets everything kept for their pod UIDs, emptyDir volumes included.
func (c *Controller) removePod(ctx context.Context, ctrs []*store.Container) error {
	if err := c.killAll(ctx, ctrs, true); err != nil {
		return err
	}
	uids := map[string]bool{}
	for _, ct := range ctrs {
		uids[ct.PodUID] = true
	}
	for uid := range uids {
		if uid == "" {
			continue
		}
		c.restarts.Forget(uid + "/")
		c.pulls.forget(uid + "/")
		c.startFails.forget(uid + "/")
		c.pullJobs.forget(uid + "/")
		if err := os.RemoveAll(c.podDir(uid)); err != nil {
			return fmt.Errorf("remove pod volumes: %w", err)
		}
	}
	return nil
}

// killAll stops app containers in parallel, then sandboxes, and removes
// them all when remove is set.
func (c *Controller) killAll(ctx context.Context, ctrs []*store.Container, remove bool) error {
	var apps, sandboxes []*store.Container
	for _, ct := range ctrs {
		if ct.Name == store.SandboxName {
			sandboxes = append(sandboxes, ct)
		} else {
			apps = append(apps, ct)
		}
	}
	if err := c.stopParallel(ctx, apps, remove); err != nil {
		return err
	}
	return c.stopParallel(ctx, sandboxes, remove)
}

func (c *Controller) stopParallel(ctx context.Context, ctrs []*store.Container, remove bool) error {
	var wg sync.WaitGroup
	errs := make([]error, len(ctrs))
	for i, ct := range ctrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.stop(ctx, ct, remove)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func graceOf(ct *store.Container) time.Duration {
	if s, err := strconv.Atoi(ct.Labels[runtime.LabelGracePeriod]); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	return 30 * time.Second
}

func (c *Controller) stop(ctx context.Context, ct *store.Container, remove bool) error {
	if ct.Running() || ct.State == store.StateCreated {
		grace := graceOf(ct)
		if ct.Name != store.SandboxName {
			c.event(ct.PodKey, ct.Name, events.Normal, "Killing", "Stopping container %s", ct.Name)
			grace = c.runPreStop(ctx, ct, grace)
		}
		if err := c.rt.StopContainer(ctx, ct.ID, grace); err != nil {
			return fmt.Errorf("stop %s: %w", ct.DockerName, err)
		}
	}
	if remove {
		if err := c.rt.RemoveContainer(ctx, ct.ID); err != nil {
			// A container the engine failed to remove is "dead" (e.g. its
			// root filesystem still mounted after a dockerd restart), and
			// its removal may keep failing: it must not block the pod.
			// Later reconciles try again.
			c.refresh(ctx, ct.ID)
			if cur, _ := c.store.Container(nil, ct.ID); cur != nil && (cur.State == store.StateDead || cur.State == store.StateRemoving) {
				c.log.Warn("cannot remove dead container; leaving it", "pod", ct.PodKey, "container", ct.DockerName, "err", err)
				return nil
			}
			return fmt.Errorf("remove %s: %w", ct.DockerName, err)
		}
		return c.store.DeleteContainer(ct.ID)
	}
	c.refresh(ctx, ct.ID)
	return nil
}

// refresh writes the runtime's current view of id into the store, so the
// next reconcile sees this one's actions even before their events arrive.
func (c *Controller) refresh(ctx context.Context, id string) {
	ct, err := c.rt.InspectContainer(ctx, id)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		_ = c.store.DeleteContainer(id)
	case err == nil:
		// An unchanged container is not written back: the write would enqueue
		// the pod again at once, past the rate limiter, so a container that
		// keeps failing to start would be retried in a hot loop.
		if old, _ := c.store.Container(nil, id); old != nil && reflect.DeepEqual(old, ct) {
			return
		}
		_ = c.store.UpsertContainer(ct)
	}
}

// newestFirst orders instances of one container by attempt, newest first.
func newestFirst(cs []*store.Container) {
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].Attempt != cs[j].Attempt {
			return cs[i].Attempt > cs[j].Attempt
		}
		return cs[i].CreatedAt.After(cs[j].CreatedAt)
	})
}

// podState is what one reconcile learned, for the status it writes.
type podState struct {
	waiting    map[string]v1.ContainerStateWaiting // by container name
	failedInit bool
	probe      func(id string, kind prober.Kind) prober.Result
}

func (c *Controller) reconcilePod(ctx context.Context, p *store.Pod, ctrs []*store.Container) (Result, error) {
	pod := p.Spec
	uid := string(pod.UID)

	byName, stale := groupByName(ctrs, uid)
	if len(stale) > 0 {
		synced := true
		for _, ct := range stale {
			synced = synced && c.sourceSynced(ct.Source)
		}
		// An older incarnation goes only once its own source has synced:
		// until then it may still be the one its source wants.
		if synced {
			c.log.Info("removing containers of a replaced pod", "pod", p.Key, "containers", len(stale))
			if err := c.removePod(ctx, stale); err != nil {
				return Result{}, err
			}
		}
	}

	st := &podState{waiting: map[string]v1.ContainerStateWaiting{}, probe: c.probes.Result}
	sb, err := c.syncSandbox(ctx, p, byName)
	var wait *backoffError
	switch {
	case errors.As(err, &wait):
		c.writeStatus(p, st)
		return Result{RequeueAfter: wait.delay}, nil
	case err != nil:
		c.writeStatus(p, st)
		return Result{}, err
	case sb == nil:
		// The sandbox is gone and the restart policy says the pod is done.
		err := c.collect(ctx, p, byName)
		c.finish(p, st)
		return Result{}, err
	}
	if err := c.ensureVolumes(pod); err != nil {
		return Result{}, err
	}

	var res Result
	merge := func(r Result) {
		res.Requeue = res.Requeue || r.Requeue
		if r.RequeueAfter > 0 && (res.RequeueAfter == 0 || r.RequeueAfter < res.RequeueAfter) {
			res.RequeueAfter = r.RequeueAfter
		}
	}

	initDone := true
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		done, r, err := c.syncInit(ctx, p, ic, sb, byName[ic.Name], st)
		merge(r)
		if err != nil {
			c.writeStatus(p, st)
			return res, err
		}
		if !done {
			initDone = false
			break
		}
	}

	var errs []error
	if initDone {
		for i := range pod.Spec.Containers {
			ctr := &pod.Spec.Containers[i]
			r, err := c.syncContainer(ctx, p, ctr, sb, byName[ctr.Name], st)
			merge(r)
			if err != nil {
				errs = append(errs, fmt.Errorf("container %s: %w", ctr.Name, err))
			}
		}
	}
	if err := c.collect(ctx, p, byName); err != nil {
		errs = append(errs, err)
	}
	c.finish(p, st)
	return res, errors.Join(errs...)
}

// finish points the probe manager at the pod's running containers and
// records its status, from one read of the store.
func (c *Controller) finish(p *store.Pod, st *podState) {
	byName := c.currentContainers(p.Key, string(p.Spec.UID))
	c.syncProbes(p, byName)
	c.writeStatusFrom(p, st, byName)
}

// backoffError says a step failed and may be retried only after delay.
type backoffError struct {
	delay time.Duration
	err   error
}

func (e *backoffError) Error() string { return fmt.Sprintf("%v (retry in %s)", e.err, e.delay) }
func (e *backoffError) Unwrap() error { return e.err }

// syncSandbox returns the running sandbox of the pod, creating a new one when
// it is missing, exited, or its pod-level networking changed. A networking
// change (an edit) recreates the pod fresh. A sandbox that died takes its
// running containers down with it, as in the kubelet: they are stopped but
// kept, so their restart policy decides and their restart counts go on; a
// Never pod that already ran, or an OnFailure pod whose containers all
// succeeded, gets no new sandbox (nil, nil): it is finished. Failed starts
// back off (a *backoffError).
func (c *Controller) syncSandbox(ctx context.Context, p *store.Pod, byName map[string][]*store.Container) (*store.Container, error) {
	sandboxes := byName[store.SandboxName]
	want := sandboxHash(p.Spec)
	key := string(p.Spec.UID) + "/" + store.SandboxName
	now := c.cfg.Clock.Now()
	if len(sandboxes) > 0 {
		sb := sandboxes[0]
		if sb.Running() && sb.Hash == want {
			return sb, nil
		}
		if sb.State == store.StateCreated && sb.Hash == want {
			if at := c.startFails.retryAt(key); now.Before(at) {
				return nil, &backoffError{delay: at.Sub(now), err: errors.New("sandbox failed to start")}
			}
			err := c.rt.StartContainer(ctx, sb.ID)
			c.refresh(ctx, sb.ID)
			if err == nil {
				c.startFails.reset(key)
				return c.store.Container(nil, sb.ID)
			}
			// After a dockerd restart a created container can be unstartable
			// for good ("task ... already exists"): replace it.
			c.log.Info("cannot start created sandbox; recreating it", "pod", p.Key, "err", err)
		}
	}
	edited := len(sandboxes) > 0 && sandboxes[0].Hash != want
	var kill []*store.Container
	ran, allSucceeded := false, true
	for name, list := range byName {
		for i, ct := range list {
			switch {
			case name == store.SandboxName:
				kill = append(kill, ct)
			case edited || ct.Running() || ct.State == store.StateCreated:
				kill = append(kill, ct)
			}
			if name != store.SandboxName {
				ran = true
				if i == 0 && (ct.Running() || ct.ExitCode != 0) {
					allSucceeded = false
				}
			}
		}
	}
	if len(kill) > 0 {
		c.log.Info("pod sandbox changed; killing the pod", "pod", p.Key, "edited", edited, "containers", len(kill))
		c.event(p.Key, "", events.Normal, "SandboxChanged", "Pod sandbox changed, it will be killed and re-created")
		// An edit starts the pod afresh; a dead sandbox keeps the stopped
		// containers for their restart policy, logs and counts.
		var remove, stop []*store.Container
		for _, ct := range kill {
			if edited || ct.Name == store.SandboxName || ct.State == store.StateCreated {
				remove = append(remove, ct)
			} else {
				stop = append(stop, ct)
			}
		}
		if err := c.killAll(ctx, stop, false); err != nil {
			return nil, err
		}
		if err := c.killAll(ctx, remove, true); err != nil {
			return nil, err
		}
		cur := c.currentContainers(p.Key, string(p.Spec.UID))
		for name := range byName {
			byName[name] = cur[name]
		}
	}
	if !edited && ran {
		switch p.Spec.Spec.RestartPolicy {
		case v1.RestartPolicyNever:
			return nil, nil
		case v1.RestartPolicyOnFailure:
			if allSucceeded {
				return nil, nil
			}
		}
	}
	if at := c.startFails.retryAt(key); now.Before(at) {
		return nil, &backoffError{delay: at.Sub(now), err: errors.New("sandbox failed to start")}
	}
	if err := c.ensurePauseImage(ctx); err != nil {
		return nil, err
	}
	attempt := 0
	if len(sandboxes) > 0 {
		attempt = sandboxes[0].Attempt + 1
	}
	cfg := c.sandboxConfig(p, attempt)
	id, err := c.rt.CreateContainer(ctx, cfg)
	if err != nil {
		if errors.Is(err, runtime.ErrNotFound) {
			c.pauseMu.Lock()
			c.pauseReady = false
			c.pauseMu.Unlock()
		}
		return nil, fmt.Errorf("create sandbox: %w", err)
	}
	err = c.rt.StartContainer(ctx, id)
	c.refresh(ctx, id)
	if err != nil {
		delay := c.startFails.failed(key, now)
		c.event(p.Key, "", events.Warning, "FailedCreatePodSandBox", "Failed to start the pod sandbox: %v", err)
		c.log.Warn("pod sandbox failed to start", "pod", p.Key, "err", err, "retryIn", delay)
		return nil, &backoffError{delay: delay, err: fmt.Errorf("start sandbox: %w", err)}
	}
	c.startFails.reset(key)
	return c.store.Container(nil, id)
}

func (c *Controller) ensureVolumes(pod *v1.Pod) error {
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.Medium != v1.StorageMediumMemory {
			if err := os.MkdirAll(c.emptyDirPath(pod, v.Name), 0o777); err != nil {
				return fmt.Errorf("emptyDir %s: %w", v.Name, err)
			}
		}
	}
	return nil
}

// syncInit runs one init container to completion; done is true once it
// exited 0 in the current sandbox.
func (c *Controller) syncInit(ctx context.Context, p *store.Pod, ic *v1.Container, sb *store.Container, instances []*store.Container, st *podState) (bool, Result, error) {
	var latest *store.Container
	if len(instances) > 0 && instances[0].Labels[labelSandbox] == sb.ID {
		latest = instances[0]
	}
	switch {
	case latest == nil:
		r, err := c.start(ctx, p, ic, sb, instances, 0, st)
		return false, r, err
	case latest.Running():
		return false, Result{}, nil
	case latest.State == store.StateCreated:
		r, err := c.startCreated(ctx, p, ic.Name, latest, st, func() (Result, error) {
			return c.start(ctx, p, ic, sb, instances, latest.RestartCount, st)
		})
		return false, r, err
	case latest.ExitCode == 0:
		return true, Result{}, nil
	}
	policy := p.Spec.Spec.RestartPolicy
	if policy == v1.RestartPolicyAlways {
		policy = v1.RestartPolicyOnFailure // init containers never restart on success
	}
	r, err := c.restartExited(ctx, p, ic, sb, instances, latest, policy, st)
	if policy == v1.RestartPolicyNever {
		st.failedInit = true
	}
	return false, r, err
}

func (c *Controller) syncContainer(ctx context.Context, p *store.Pod, ctr *v1.Container, sb *store.Container, instances []*store.Container, st *podState) (Result, error) {
	if len(instances) == 0 {
		return c.start(ctx, p, ctr, sb, instances, 0, st)
	}
	latest := instances[0]
	hash := containerHash(p.Spec, ctr)
	switch {
	case latest.Hash != hash:
		c.log.Info("container spec changed, recreating", "pod", p.Key, "container", ctr.Name)
		if err := c.stop(ctx, latest, true); err != nil {
			return Result{}, err
		}
		return c.start(ctx, p, ctr, sb, instances, latest.RestartCount, st)
	case latest.Running() && latest.Labels[labelSandbox] != sb.ID:
		if err := c.stop(ctx, latest, true); err != nil {
			return Result{}, err
		}
		return c.start(ctx, p, ctr, sb, instances, latest.RestartCount, st)
	case latest.Running():
		if kind, bad := c.unhealthy(latest); bad {
			c.event(p.Key, ctr.Name, events.Warning, "Unhealthy", "%s probe failed", kind)
			c.log.Info("killing unhealthy container", "pod", p.Key, "container", ctr.Name, "probe", kind)
			c.event(p.Key, ctr.Name, events.Normal, "Killing", "Container %s failed %s probe, will be restarted", ctr.Name, kind)
			return Result{}, c.stop(ctx, latest, false)
		}
		return Result{}, nil
	case latest.State == store.StateCreated:
		return c.startCreated(ctx, p, ctr.Name, latest, st, func() (Result, error) {
			return c.start(ctx, p, ctr, sb, instances, latest.RestartCount, st)
		})
	}
	return c.restartExited(ctx, p, ctr, sb, instances, latest, p.Spec.Spec.RestartPolicy, st)
}

func (c *Controller) restartExited(ctx context.Context, p *store.Pod, ctr *v1.Container, sb *store.Container, instances []*store.Container, latest *store.Container, policy v1.RestartPolicy, st *podState) (Result, error) {
	key := string(p.Spec.UID) + "/" + ctr.Name
	action, delay, reason := c.restarts.Decide(key, policy, latest.ExitCode, latest.StartedAt, latest.FinishedAt, c.cfg.Clock.Now())
	switch action {
	case ActionNone:
		return Result{}, nil
	case ActionWait:
		c.event(p.Key, ctr.Name, events.Warning, "BackOff", "Back-off restarting failed container %s", ctr.Name)
		st.waiting[ctr.Name] = v1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", c.restarts.Delay(key), ctr.Name, p.Key)}
		return Result{RequeueAfter: delay}, nil
	}
	c.log.Info("restarting container", "pod", p.Key, "container", ctr.Name, "exitCode", latest.ExitCode, "reason", reason)
	res, err := c.start(ctx, p, ctr, sb, instances, latest.RestartCount+1, st)
	if err == nil && res.RequeueAfter == 0 {
		c.restarts.Restarted(key)
		c.cfg.Metrics.ContainerRestarted()
	}
	return res, err
}

// startCreated starts a container left in state created. When the engine
// refuses (after a dockerd restart a created container can be unstartable
// for good: "task ... already exists"), it removes the container and replace
// creates a new instance. While earlier starts of this container failed, it
// waits out their backoff first.
func (c *Controller) startCreated(ctx context.Context, p *store.Pod, name string, ct *store.Container, st *podState, replace func() (Result, error)) (Result, error) {
	key := string(p.Spec.UID) + "/" + name
	if r, waiting := c.startBackoff(p, name, key, st); waiting {
		return r, nil
	}
	err := c.startExisting(ctx, ct)
	if err == nil {
		c.startFails.reset(key)
		return Result{}, nil
	}
	c.log.Info("cannot start created container; replacing it", "pod", ct.PodKey, "container", ct.DockerName, "err", err)
	if rerr := c.stop(ctx, ct, true); rerr != nil {
		return Result{}, errors.Join(err, rerr)
	}
	return replace()
}

// startBackoff reports whether container name of p must still wait after
// failed starts, recording RunContainerError meanwhile.
func (c *Controller) startBackoff(p *store.Pod, name, key string, st *podState) (Result, bool) {
	now := c.cfg.Clock.Now()
	at := c.startFails.retryAt(key)
	if !now.Before(at) {
		return Result{}, false
	}
	st.waiting[name] = v1.ContainerStateWaiting{Reason: "RunContainerError",
		Message: fmt.Sprintf("back-off %s restarting container %s that failed to start", at.Sub(now).Round(time.Millisecond), name)}
	return Result{RequeueAfter: at.Sub(now)}, true
}

func (c *Controller) startExisting(ctx context.Context, ct *store.Container) error {
	err := c.rt.StartContainer(ctx, ct.ID)
	c.refresh(ctx, ct.ID)
	if err != nil {
		return fmt.Errorf("start %s: %w", ct.DockerName, err)
	}
	return nil
}

// start creates and starts a new instance of ctr, after making sure its image
// is present. Image pull failures back off like crashes.
func (c *Controller) start(ctx context.Context, p *store.Pod, ctr *v1.Container, sb *store.Container, instances []*store.Container, restarts int, st *podState) (Result, error) {
	pullKey := string(p.Spec.UID) + "/" + ctr.Name
	if r, waiting := c.startBackoff(p, ctr.Name, pullKey, st); waiting {
		return r, nil
	}
	if r, ok := c.ensureImage(ctx, p, ctr, pullKey, st); !ok {
		return r, nil
	}
	attempt := 0
	if len(instances) > 0 {
		attempt = instances[0].Attempt + 1
	}
	cfg, err := c.containerConfig(p, ctr, sb.ID, attempt, restarts)
	if err != nil {
		st.waiting[ctr.Name] = v1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: err.Error()}
		return Result{}, err
	}
	cfg.Labels[labelSandbox] = sb.ID
	if l := preStopLabel(ctr); l != "" {
		cfg.Labels[labelPreStop] = l
	}
	if p.Spec.Spec.HostNetwork {
		cfg.Labels[labelHostNetwork] = "true"
	}
	id, err := c.rt.CreateContainer(ctx, cfg)
	if err != nil {
		st.waiting[ctr.Name] = v1.ContainerStateWaiting{Reason: "CreateContainerError", Message: err.Error()}
		c.event(p.Key, ctr.Name, events.Warning, "Failed", "Error: %v", err)
		return Result{}, err
	}
	c.event(p.Key, ctr.Name, events.Normal, "Created", "Created container %s", ctr.Name)
	err = c.rt.StartContainer(ctx, id)
	c.refresh(ctx, id)
	if err != nil {
		// A start that fails (bad entrypoint, port taken) backs off like a
		// crash instead of being retried at once.
		delay := c.startFails.failed(pullKey, c.cfg.Clock.Now())
		st.waiting[ctr.Name] = v1.ContainerStateWaiting{Reason: "RunContainerError", Message: err.Error()}
		c.event(p.Key, ctr.Name, events.Warning, "Failed", "Error: %v", err)
		c.log.Warn("container failed to start", "pod", p.Key, "container", ctr.Name, "err", err, "retryIn", delay)
		return Result{RequeueAfter: delay}, nil
	}
	c.startFails.reset(pullKey)
	c.event(p.Key, ctr.Name, events.Normal, "Started", "Started container %s", ctr.Name)
	if err := c.runPostStart(ctx, p, ctr, id); err != nil {
		ct, _ := c.store.Container(nil, id)
		if ct != nil {
			_ = c.stop(ctx, ct, false)
		}
	}
	return Result{}, nil
}

// collect removes containers the spec no longer names, running instances
// older than the newest (duplicates), and all but the most recent exited
// instance of each pod container.
func (c *Controller) collect(ctx context.Context, p *store.Pod, byName map[string][]*store.Container) error {
	wanted := map[string]bool{store.SandboxName: true}
	for _, ct := range p.Spec.Spec.InitContainers {
		wanted[ct.Name] = true
	}
	for _, ct := range p.Spec.Spec.Containers {
		wanted[ct.Name] = true
	}
	var remove []*store.Container
	for name, list := range byName {
		keptExited := false
		for i, ct := range list {
			switch {
			case !wanted[name]:
				remove = append(remove, ct)
			case i == 0:
			case ct.Running():
				// A duplicate of the newest instance (made while the store
				// missed a container, e.g. around a dockerd restart).
				c.log.Info("removing a duplicate running container", "pod", p.Key, "container", ct.DockerName)
				remove = append(remove, ct)
			case !keptExited && name != store.SandboxName:
				keptExited = true // the "previous" instance, for logs and status
			default:
				remove = append(remove, ct)
			}
			if i == 0 && !ct.Running() {
				keptExited = true
			}
		}
	}
	if len(remove) == 0 {
		return nil
	}
	return c.killAll(ctx, remove, true)
}

// currentContainers re-reads the pod's containers of uid, newest first.
func (c *Controller) currentContainers(key, uid string) map[string][]*store.Container {
	ctrs, _ := c.store.ContainersByPod(nil, key)
	byName, _ := groupByName(ctrs, uid)
	return byName
}

// groupByName groups the containers of pod incarnation uid by container
// name, newest instance first; containers of other incarnations are stale.
func groupByName(ctrs []*store.Container, uid string) (byName map[string][]*store.Container, stale []*store.Container) {
	byName = map[string][]*store.Container{}
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
