package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podconfig"
	"github.com/berth-dev/berth/podstatus"
	"github.com/berth-dev/berth/prober"
	"github.com/berth-dev/berth/runtime"
)

// execState is what carrying out one plan learned, for the status and the
// result: waiting reasons and the earliest requeue.
type execState struct {
	waiting      map[string]v1.ContainerStateWaiting
	requeueAfter time.Duration
	// observe is a sandbox whose IP the background operation asks the
	// engine for first, before its steps.
	observe string
	// bg are the steps of the pod's background operation, run side by side.
	bg []func(context.Context)
	// volumeErrs are the pod's projected volumes that could not be written
	// (syncProjections): the containers mounting them wait.
	volumeErrs podconfig.VolumeErrors
}

func (x *execState) wait(name string, w v1.ContainerStateWaiting) { x.waiting[name] = w }

func (x *execState) requeue(d time.Duration) { x.requeueAfter = sooner(x.requeueAfter, d) }

// execute carries out pl. Kills that stop a process, postStart hooks and the
// inspect of a new sandbox run as the pod's background operation; removals,
// the sandbox and the starts run here, in that order.
func (c *Controller) execute(ctx context.Context, in *PlanInput, pl *Plan) (Result, error) {
	key := in.Key
	if len(pl.Events) > 0 {
		pods := planEventPods(in)
		for _, e := range pl.Events {
			for _, pod := range pods {
				c.rec.event(pod, e.Container, e.Type, e.Reason, "%s", e.Message)
			}
		}
	}
	x := &execState{waiting: map[string]v1.ContainerStateWaiting{}, requeueAfter: pl.RequeueAfter}
	for n, w := range pl.Waiting {
		x.waiting[n] = w
	}
	var errs []error
	if in.Pod != nil {
		c.life.declared(key)
	}
	if len(pl.Kill) > 0 {
		c.life.kills(key, pl.Kill)
		kills, forget := pl.Kill, pl.Forget
		deleting := in.Pod == nil
		if deleting {
			c.life.deletionBegins(key, c.cfg.Clock.Now())
		}
		done := func(ctx context.Context) {
			c.forget(ctx, forget)
			if deleting {
				c.life.deleted(key, c.cfg.Clock.Now())
			}
		}
		if pl.background() {
			x.bg = append(x.bg, func(ctx context.Context) {
				if err := c.lc.killAll(ctx, kills); err != nil {
					if ctx.Err() == nil {
						c.log.Warn("killing containers failed", "pod", key, "err", err)
					}
					return
				}
				done(ctx)
			})
		} else if err := c.lc.killAll(ctx, kills); err != nil {
			errs = append(errs, err)
		} else {
			done(ctx)
		}
	}
	if pl.Reclaim && in.Pod != nil {
		pod := in.Pod.Spec
		x.bg = append(x.bg, func(context.Context) { c.evict.Reclaim(key, pod) })
	}
	if p := in.Pod; p != nil && !pl.Finished {
		x.volumeErrs = c.syncProjections(p)
	}
	if p := in.Pod; p != nil && len(errs) == 0 {
		if err := c.executeStarts(ctx, p, pl, x); err != nil {
			errs = append(errs, err)
		}
	}
	if len(x.bg) > 0 || x.observe != "" {
		steps, sandbox := x.bg, x.observe
		c.ops.start(ctx, key, func(ctx context.Context) {
			if sandbox != "" {
				c.obs.refresh(ctx, sandbox) // hooks connect to its IP
			}
			// Steps are independent (stops, hooks): none waits for another.
			var wg sync.WaitGroup
			for _, step := range steps {
				wg.Add(1)
				go func() {
					defer wg.Done()
					step(ctx)
				}()
			}
			wg.Wait()
		})
	}
	if in.Pod == nil {
		c.probes.Sync(key, nil)
	} else {
		c.finish(ctx, in.Pod, pl, x.waiting)
		for _, b := range pl.BackOffs { // after the exit the status logs
			c.life.backOff(key, string(in.Pod.Spec.UID), b)
		}
		uid := string(in.Pod.Spec.UID)
		for name, w := range x.waiting {
			if w.Reason == "ErrImagePull" {
				c.images.Reported(uid + "/" + name)
			}
		}
	}
	return Result{RequeueAfter: x.requeueAfter}, errors.Join(errs...)
}

// executeStarts brings up the sandbox the plan asks for, then starts the
// plan's containers in order. A container with a postStart hook ends the
// pass: its hook runs in the background and the next containers start after
// it, as in the kubelet.
func (c *Controller) executeStarts(ctx context.Context, p *model.Pod, pl *Plan, x *execState) error {
	if pl.CreateSandbox == nil && pl.StartSandbox == nil && len(pl.Start) == 0 {
		if sb := pl.Sandbox; sb != nil && sb.IP == "" && !p.Spec.Spec.HostNetwork {
			x.observe = sb.ID
		}
		return nil
	}
	if err := c.podconfig.EnsureVolumes(ctx, c.volumes.creator(string(p.Spec.UID)), p, pl.CreateSandbox != nil); err != nil {
		return err
	}
	if podconfig.HasClaims(p.Spec) && len(pl.Start) > 0 {
		failed := c.podconfig.EnsureClaims(ctx, c.rt, p)
		for vol, err := range failed {
			x.volumeErrs.Add(vol, err)
		}
		c.bindClaims(p, failed)
	}
	sbID := pl.sandboxID()
	switch {
	case pl.CreateSandbox != nil:
		id, err := c.createSandbox(ctx, p, *pl.CreateSandbox, x)
		if err != nil || id == "" {
			return err
		}
		sbID = id
	case pl.StartSandbox != nil:
		if !c.startExisting(ctx, p, model.SandboxName, pl.StartSandbox, x) {
			return nil
		}
	}
	if sbID == "" {
		return nil
	}
	if !p.Spec.Spec.HostNetwork && (pl.Sandbox == nil || pl.Sandbox.IP == "") {
		// A new sandbox's IP (or one a failed inspect left unknown), which
		// no event carries, for status, probes and hooks: asked beside the
		// workers, as the engine may be slow to answer while it starts
		// containers; the pod is reconciled again once it is known.
		x.observe = sbID
	}
	var errs []error
	for _, s := range pl.Start {
		if s.Reason != "" {
			c.log.Info("starting container", "pod", p.Key, "container", s.Spec.Name, "why", s.Reason)
		}
		if s.Existing != nil {
			if c.startExisting(ctx, p, s.Spec.Name, s.Existing, x) && c.afterStart(p, s, s.Existing.ID, x) {
				break
			}
			continue
		}
		id, err := c.startNew(ctx, p, s, sbID, x)
		if err != nil {
			errs = append(errs, fmt.Errorf("container %s: %w", s.Spec.Name, err))
			continue
		}
		if id != "" && c.afterStart(p, s, id, x) {
			break
		}
	}
	return errors.Join(errs...)
}

// afterStart records a started container's restart and schedules its
// postStart hook; it reports true when the hook defers the next starts.
func (c *Controller) afterStart(p *model.Pod, s Start, id string, x *execState) bool {
	k := string(p.Spec.UID) + "/" + s.Spec.Name
	if s.Restart {
		c.restarts.Restarted(k, s.RanFor)
		c.cfg.Metrics.ContainerRestarted()
	}
	ctr := s.Spec
	if ctr.Lifecycle == nil || ctr.Lifecycle.PostStart == nil || c.lc.hooks == nil {
		return false
	}
	x.bg = append(x.bg, func(ctx context.Context) {
		if err := c.lc.postStart(ctx, p, ctr, id); err != nil {
			if ct, _ := c.store.Container(nil, id); ct != nil {
				_ = c.lc.stop(ctx, ct, false)
			}
		}
	})
	return true
}

// forget drops everything kept for pod UIDs whose containers are removed,
// the pod's directory (subPath binds unmounted first, emptyDirs) and
// Memory emptyDir volumes included. The UIDs come from container labels:
// podfs.RemovePod refuses one that is not a single path element, and never
// removes through a mount point.
func (c *Controller) forget(ctx context.Context, uids []string) {
	for _, uid := range uids {
		c.life.forget(uid)
		c.restarts.Forget(uid + "/")
		c.startFails.Forget(uid + "/")
		c.images.Forget(uid + "/")
		if uidDesired(c.store, uid) {
			// A pod renamed with its metadata.uid: its files are the new
			// name's now.
			continue
		}
		if err := c.paths.RemovePod(uid); err != nil {
			c.log.Warn("removing pod directory failed", "uid", uid, "err", err)
		} else {
			c.projected.Forget(uid)
		}
		if !c.volumes.mayHave(ctx, uid) {
			continue
		}
		if err := c.volumes.remove(ctx, uid); err != nil {
			c.log.Warn("removing pod volumes failed", "uid", uid, "err", err)
		} else {
			c.volumes.removed(uid)
		}
	}
}

// newestFirst orders instances of one container by attempt, newest first.
func newestFirst(cs []*model.Container) {
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].Attempt != cs[j].Attempt {
			return cs[i].Attempt > cs[j].Attempt
		}
		return cs[i].CreatedAt.After(cs[j].CreatedAt)
	})
}

// startExisting starts a container left created. When the engine refuses
// (after a dockerd restart a created container can be unstartable for good:
// "task ... already exists"), the failure backs off and the container is
// removed, to be replaced by a new instance.
func (c *Controller) startExisting(ctx context.Context, p *model.Pod, name string, ct *model.Container, x *execState) bool {
	key := string(p.Spec.UID) + "/" + name
	at, seq := c.cfg.Clock.Now(), c.store.Seq()
	err := c.rt.StartContainer(ctx, ct.ID)
	if err == nil {
		c.obs.started(ct.ID, at, seq)
		c.startFails.Reset(key)
		return true
	}
	delay := c.startFails.Failed(key)
	x.requeue(delay)
	x.wait(name, v1.ContainerStateWaiting{Reason: "RunContainerError", Message: err.Error()})
	c.log.Info("cannot start created container; replacing it", "pod", p.Key, "container", ct.DockerName, "err", err, "retryIn", delay)
	if rerr := c.lc.stop(ctx, ct, true); rerr != nil {
		c.log.Warn("removing unstartable container failed", "pod", p.Key, "container", ct.DockerName, "err", rerr)
	}
	return false
}

// createSandbox creates and starts the pod's sandbox and returns its ID, or
// "" when it failed to start (the failure backs off).
func (c *Controller) createSandbox(ctx context.Context, p *model.Pod, attempt int, x *execState) (string, error) {
	image, err := c.pause.ID(ctx)
	if err != nil {
		return "", err
	}
	key := string(p.Spec.UID) + "/" + model.SandboxName
	cfg := c.podconfig.SandboxConfig(p, attempt, image)
	at, s0 := c.cfg.Clock.Now(), c.store.Seq()
	id, err := c.rt.CreateContainer(ctx, cfg)
	if err != nil {
		if errors.Is(err, runtime.ErrImageNotFound) {
			c.pause.Forget(image)
		}
		return "", fmt.Errorf("create sandbox: %w", err)
	}
	t1, s1 := c.cfg.Clock.Now(), c.store.Seq()
	err = c.rt.StartContainer(ctx, id)
	c.obs.observe(id, cfg, at, t1, s0, s1, err)
	if err != nil {
		delay := c.startFails.Failed(key)
		x.requeue(delay)
		c.rec.event(podOf(p), "", events.Warning, "FailedCreatePodSandBox", "Failed to start the pod sandbox: %v", err)
		c.log.Warn("pod sandbox failed to start", "pod", p.Key, "err", err, "retryIn", delay)
		return "", nil
	}
	c.startFails.Reset(key)
	return id, nil
}

// startNew creates and starts a new instance as s says, joined to sandbox
// sbID, once its image is there. It returns the new container's ID, or ""
// when the container waits (image, failed start: both back off).
func (c *Controller) startNew(ctx context.Context, p *model.Pod, s Start, sbID string, x *execState) (string, error) {
	ctr := s.Spec
	key := string(p.Spec.UID) + "/" + ctr.Name
	if vol, err := volumeError(ctr, x.volumeErrs); err != nil {
		// The object's arrival (or change) enqueues the pod again.
		x.wait(ctr.Name, v1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: err.Error()})
		c.rec.event(podOf(p), ctr.Name, events.Warning, "FailedMount", "MountVolume.SetUp failed for volume %q : %v", vol, err)
		return "", nil
	}
	if ok, err := c.ensureImage(ctx, p, ctr, key, x); !ok || err != nil {
		return "", err
	}
	cfg, err := c.newContainerConfig(ctx, p, ctr, sbID, s.Attempt, s.RestartCount)
	if err != nil {
		x.wait(ctr.Name, v1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: err.Error()})
		if podconfig.IsMissing(err) {
			c.rec.event(podOf(p), ctr.Name, events.Warning, "Failed", "Error: %v", err)
			return "", nil
		}
		return "", err
	}
	at, s0 := c.cfg.Clock.Now(), c.store.Seq()
	id, err := c.rt.CreateContainer(ctx, cfg)
	if errors.Is(err, runtime.ErrImageNotFound) {
		// Removed since it was seen: look again (and pull) next time.
		c.images.ForgetImage(ctr.Image)
		x.wait(ctr.Name, v1.ContainerStateWaiting{Reason: "ContainerCreating", Message: err.Error()})
		return "", err
	}
	if err != nil {
		x.wait(ctr.Name, v1.ContainerStateWaiting{Reason: "CreateContainerError", Message: err.Error()})
		c.rec.event(podOf(p), ctr.Name, events.Warning, "Failed", "Error: %v", err)
		return "", err
	}
	c.rec.event(podOf(p), ctr.Name, events.Normal, "Created", "Created container %s", ctr.Name)
	t1, s1 := c.cfg.Clock.Now(), c.store.Seq()
	err = c.rt.StartContainer(ctx, id)
	c.obs.observe(id, cfg, at, t1, s0, s1, err)
	if err != nil {
		// A start that fails (bad entrypoint, port taken) backs off like a
		// crash instead of being retried at once.
		delay := c.startFails.Failed(key)
		x.requeue(delay)
		x.wait(ctr.Name, v1.ContainerStateWaiting{Reason: "RunContainerError", Message: err.Error()})
		c.rec.event(podOf(p), ctr.Name, events.Warning, "Failed", "Error: %v", err)
		c.log.Warn("container failed to start", "pod", p.Key, "container", ctr.Name, "err", err, "retryIn", delay)
		return "", nil
	}
	c.startFails.Reset(key)
	c.rec.event(podOf(p), ctr.Name, events.Normal, "Started", "Started container %s", ctr.Name)
	return id, nil
}

// newContainerConfig gathers what podconfig.ContainerConfig maps from (the image's
// user, the sandbox's IP when the env reads it: asked for at once when no
// event told it yet) and prepares the instance's termination log.
func (c *Controller) newContainerConfig(ctx context.Context, p *model.Pod, ctr *v1.Container, sbID string, attempt, restarts int) (*runtime.ContainerConfig, error) {
	image, err := c.images.Info(ctx, ctr.Image)
	if err != nil {
		return nil, err
	}
	sb := podconfig.Sandbox{ID: sbID, IPs: podconfig.PodIPs{HostIP: c.cfg.NodeInfo.IP}}
	switch {
	case p.Spec.Spec.HostNetwork:
		sb.IPs.PodIP = c.cfg.NodeInfo.IP
	case podconfig.NeedsPodIP(ctr):
		ct, _ := c.store.Container(nil, sbID)
		if ct == nil || ct.IP == "" {
			c.obs.refresh(ctx, sbID)
			ct, _ = c.store.Container(nil, sbID)
		}
		if ct == nil || ct.IP == "" {
			return nil, fmt.Errorf("the pod's IP is not known yet")
		}
		sb.IPs.PodIP = ct.IP
	}
	if err := c.podconfig.PrepareTerminationLog(string(p.Spec.UID), ctr.Name, attempt); err != nil {
		return nil, fmt.Errorf("termination log: %w", err)
	}
	cfg, warnings, err := c.podconfig.ContainerConfig(p, ctr, sb, attempt, restarts, image, objectsOf(c.store, p))
	for _, w := range warnings {
		c.rec.event(podOf(p), ctr.Name, events.Warning, "InvalidEnvironmentVariableNames", "%s", w)
	}
	return cfg, err
}

// finish points the probe manager at the pod's running containers and
// records its status, from one read of the store, with the termination
// messages of containers that exited since.
func (c *Controller) finish(ctx context.Context, p *model.Pod, pl *Plan, waiting map[string]v1.ContainerStateWaiting) {
	byName := c.currentContainers(p.Key, string(p.Spec.UID))
	syncProbes(c.probes, p, byName)
	in := &podstatus.Input{Waiting: waiting, FailedInit: pl.FailedInit, ImageID: c.images.ImageID,
		Started: passed(c.probes, prober.Startup), Ready: passed(c.probes, prober.Readiness)}
	switch {
	case pl.DeadlineExceeded:
		in.FailReason, in.FailMessage = "DeadlineExceeded", deadlineMessage
	case pl.Evicted != "":
		in.FailReason, in.FailMessage = evictedReason, pl.Evicted
	}
	c.status.write(p, in, byName, c.status.newMessages(ctx, p.Key, p.Spec, byName))
}

// currentContainers re-reads the pod's containers of uid, newest first.
func (c *Controller) currentContainers(key, uid string) map[string][]*model.Container {
	ctrs, _ := c.store.ContainersByPod(nil, key)
	byName, _ := groupByName(ctrs, uid)
	return byName
}

// ensureImage reports whether ctr's image may be used now (images.Ensure);
// otherwise it sets the container's waiting reason and requeue.
func (c *Controller) ensureImage(ctx context.Context, p *model.Pod, ctr *v1.Container, key string, x *execState) (bool, error) {
	ready, w, retry, err := c.images.Ensure(ctx, p.Key, key, ctr, pullCredentials(c.store, c.rec, p))
	if ready || err != nil {
		return ready, err
	}
	x.wait(ctr.Name, w)
	x.requeue(retry)
	return false, nil
}
