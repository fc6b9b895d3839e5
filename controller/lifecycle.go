package controller

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sync/semaphore"
	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/prober"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

// lifecycle ends containers and runs their hooks: a stop with its preStop
// hook, a removal or a refresh once stopped, the kills of a plan in the
// kubelet's termination order within the stop slots (killAll), and
// postStart hooks. It reads Config (the clock) as it is at each call.
type lifecycle struct {
	cfg   *Config
	store *store.Store
	rt    runtime.Runtime
	hooks HookRunner
	rec   recorder
	obs   *observer
	// slots bounds the pods stopping containers at once (killAll).
	slots *semaphore.Weighted
	log   *slog.Logger
}

// graceOf is ct's grace period as its label says, or the default when the
// label is absent or malformed.
func graceOf(ct *model.Container) time.Duration {
	if l, _ := runtime.DecodeLabels(ct.Labels); l.GracePeriod != nil {
		return time.Duration(*l.GracePeriod) * time.Second
	}
	return model.DefaultGracePeriod
}

// stop stops ct when it runs (its preStop hook first) and removes it when
// remove is set; the store learns the outcome before stop returns.
func (l *lifecycle) stop(ctx context.Context, ct *model.Container, remove bool) error {
	if err := l.stopRunning(ctx, ct, 0, nil); err != nil {
		return err
	}
	return l.afterStop(ctx, ct, remove)
}

// stopRunning stops ct when it runs: its preStop hook, the wait for turn
// (waitTurn; nil: no wait), then the engine's stop within what is left of
// grace (ct's own period when not positive).
func (l *lifecycle) stopRunning(ctx context.Context, ct *model.Container, grace time.Duration, turn <-chan struct{}) error {
	if !ct.Running() {
		return nil
	}
	if grace <= 0 {
		grace = graceOf(ct)
	}
	if ct.Name != model.SandboxName {
		l.rec.event(podOfContainer(ct), ct.Name, events.Normal, "Killing", "Stopping container %s", ct.Name)
		grace = l.preStop(ctx, ct, grace)
	}
	grace = l.waitTurn(ctx, turn, grace)
	if err := l.rt.StopContainer(ctx, ct.ID, grace); err != nil {
		return fmt.Errorf("stop %s: %w", ct.DockerName, err)
	}
	return nil
}

// afterStop removes the stopped ct when remove is set, and otherwise
// writes its state as the engine tells it; the store learns the outcome
// before afterStop returns.
func (l *lifecycle) afterStop(ctx context.Context, ct *model.Container, remove bool) error {
	if !remove {
		l.obs.refresh(ctx, ct.ID)
		return nil
	}
	at := l.store.Seq()
	if err := l.rt.RemoveContainer(ctx, ct.ID); err != nil {
		// A container the engine failed to remove is "dead" (e.g. its root
		// filesystem still mounted after a dockerd restart), and its
		// removal may keep failing: it must not block the pod. Later
		// reconciles try again.
		l.obs.refresh(ctx, ct.ID)
		if cur, _ := l.store.Container(nil, ct.ID); cur != nil && (cur.State == model.StateDead || cur.State == model.StateRemoving) {
			l.log.Warn("cannot remove dead container; leaving it", "pod", ct.PodKey, "container", ct.DockerName, "err", err)
			return nil
		}
		return fmt.Errorf("remove %s: %w", ct.DockerName, err)
	}
	return l.store.DeleteContainer(ct.ID, at)
}

// podIP is where httpGet and tcpSocket handlers of the pod connect.
func (l *lifecycle) podIP(podKey string, hostNetwork bool) string {
	if hostNetwork {
		return "127.0.0.1"
	}
	ctrs, _ := l.store.ContainersByPod(nil, podKey)
	var sandboxes []*model.Container
	for _, ct := range ctrs {
		if ct.Name == model.SandboxName {
			sandboxes = append(sandboxes, ct)
		}
	}
	return handlerAddress(sandboxes, false)
}

// preStop runs the container's preStop hook, if any, within grace, and
// returns the grace left for the stop itself (at least
// model.MinGracePeriod, as the kubelet). The hook is the container's
// preStop label: a malformed one runs nothing.
func (l *lifecycle) preStop(ctx context.Context, ct *model.Container, grace time.Duration) time.Duration {
	if !ct.Running() || l.hooks == nil {
		return grace
	}
	lb, _ := runtime.DecodeLabels(ct.Labels)
	if lb.PreStop == nil {
		return grace
	}
	start := l.cfg.Clock.Now()
	t := prober.Target{ContainerID: ct.ID, Spec: &v1.Container{Ports: lb.PreStop.Ports}, PodIP: l.podIP(ct.PodKey, lb.HostNetwork)}
	if err := l.hooks.Run(ctx, prober.FromLifecycle(lb.PreStop.Handler), t, grace); err != nil {
		l.rec.event(podOfContainer(ct), ct.Name, events.Warning, "FailedPreStopHook", "PreStop hook for container %s failed: %v", ct.Name, err)
	}
	return max(grace-l.cfg.Clock.Since(start), model.MinGracePeriod)
}

// postStart runs the postStart hook; a failure kills the container, which
// then restarts by policy (FailedPostStartHook).
func (l *lifecycle) postStart(ctx context.Context, p *model.Pod, ctr *v1.Container, id string) error {
	if ctr.Lifecycle == nil || ctr.Lifecycle.PostStart == nil || l.hooks == nil {
		return nil
	}
	t := prober.Target{ContainerID: id, Spec: ctr, PodIP: l.podIP(p.Key, p.Spec.Spec.HostNetwork)}
	err := l.hooks.Run(ctx, prober.FromLifecycle(ctr.Lifecycle.PostStart), t, gracePeriod(p.Spec))
	if err != nil {
		l.rec.event(podOf(p), ctr.Name, events.Warning, "FailedPostStartHook", "PostStart hook for container %s failed: %v", ctr.Name, err)
	}
	return err
}

// gracePeriod is the pod's termination grace period (the default when it
// sets none), which bounds a postStart hook.
func gracePeriod(pod *v1.Pod) time.Duration {
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil && *g >= 0 {
		return time.Duration(*g) * time.Second
	}
	return model.DefaultGracePeriod
}
