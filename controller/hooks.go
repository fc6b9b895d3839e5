package controller

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podstatus"
	"github.com/berth-dev/berth/prober"
	"github.com/berth-dev/berth/runtime"
)

// Prober is the controller's view of the probe manager.
type Prober interface {
	Sync(podKey string, containers []prober.Probed)
	Result(id string, kind prober.Kind) prober.Result
}

// HookRunner runs lifecycle hook handlers.
type HookRunner interface {
	Run(ctx context.Context, h prober.Handler, t prober.Target, timeout time.Duration) error
}

type noProber struct{}

func (noProber) Sync(string, []prober.Probed)             {}
func (noProber) Result(string, prober.Kind) prober.Result { return prober.Unknown }

// podIP is where httpGet and tcpSocket handlers of the pod connect.
func (c *Controller) podIP(podKey string, hostNetwork bool) string {
	if hostNetwork {
		return "127.0.0.1"
	}
	ctrs, _ := c.store.ContainersByPod(nil, podKey)
	var sandboxes []*model.Container
	for _, ct := range ctrs {
		if ct.Name == model.SandboxName {
			sandboxes = append(sandboxes, ct)
		}
	}
	return handlerAddress(sandboxes, false)
}

// handlerAddress is where httpGet and tcpSocket handlers connect, given the
// pod's sandbox containers: the running sandbox's IP, loopback for
// hostNetwork pods, and "" (the handler fails) for a pod without a running
// sandbox, never the host's loopback: a pod could aim a preStop hook at
// the host's services by stopping its own sandbox.
func handlerAddress(sandboxes []*model.Container, hostNetwork bool) string {
	if hostNetwork {
		return "127.0.0.1"
	}
	return podstatus.SandboxIP(sandboxes)
}

// runPreStop runs the container's preStop hook, if any, within grace, and
// returns the grace left for the stop itself (at least
// model.MinGracePeriod, as the kubelet). The hook is the container's
// preStop label: a malformed one runs nothing.
func (c *Controller) runPreStop(ctx context.Context, ct *model.Container, grace time.Duration) time.Duration {
	if !ct.Running() || c.hooks == nil {
		return grace
	}
	l, _ := runtime.DecodeLabels(ct.Labels)
	if l.PreStop == nil {
		return grace
	}
	start := c.cfg.Clock.Now()
	t := prober.Target{ContainerID: ct.ID, Spec: &v1.Container{Ports: l.PreStop.Ports}, PodIP: c.podIP(ct.PodKey, l.HostNetwork)}
	if err := c.hooks.Run(ctx, prober.FromLifecycle(l.PreStop.Handler), t, grace); err != nil {
		c.event(podOfContainer(ct), ct.Name, events.Warning, "FailedPreStopHook", "PreStop hook for container %s failed: %v", ct.Name, err)
	}
	return max(grace-c.cfg.Clock.Since(start), model.MinGracePeriod)
}

// runPostStart runs the postStart hook; a failure kills the container, which
// then restarts by policy (FailedPostStartHook).
func (c *Controller) runPostStart(ctx context.Context, p *model.Pod, ctr *v1.Container, id string) error {
	if ctr.Lifecycle == nil || ctr.Lifecycle.PostStart == nil || c.hooks == nil {
		return nil
	}
	t := prober.Target{ContainerID: id, Spec: ctr, PodIP: c.podIP(p.Key, p.Spec.Spec.HostNetwork)}
	err := c.hooks.Run(ctx, prober.FromLifecycle(ctr.Lifecycle.PostStart), t, gracePeriod(p.Spec))
	if err != nil {
		c.event(podOf(p), ctr.Name, events.Warning, "FailedPostStartHook", "PostStart hook for container %s failed: %v", ctr.Name, err)
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

// unhealthy reports which probe condemned a running container, if any.
func (c *Controller) unhealthy(ct *model.Container) (prober.Kind, bool) {
	for _, k := range []prober.Kind{prober.Startup, prober.Liveness} {
		if c.probes.Result(ct.ID, k) == prober.Failure {
			return k, true
		}
	}
	return "", false
}

// passed is whether a container's probe of kind passed, as podstatus asks.
func passed(probes Prober, kind prober.Kind) func(id string) bool {
	return func(id string) bool { return probes.Result(id, kind) == prober.Success }
}

// syncProbes points the probe manager at the running app containers and
// sidecars of p, byName as currentContainers returns them.
func (c *Controller) syncProbes(p *model.Pod, byName map[string][]*model.Container) {
	ip := handlerAddress(byName[model.SandboxName], p.Spec.Spec.HostNetwork)
	var probed []prober.Probed
	if ip == "" {
		// Wait for the sandbox's address.
		c.probes.Sync(p.Key, nil)
		return
	}
	for _, ctr := range probedContainers(&p.Spec.Spec) {
		if ctr.LivenessProbe == nil && ctr.ReadinessProbe == nil && ctr.StartupProbe == nil {
			continue
		}
		if list := byName[ctr.Name]; len(list) > 0 && list[0].Running() {
			probed = append(probed, prober.Probed{
				Target:    prober.Target{ContainerID: list[0].ID, Spec: ctr, PodIP: ip},
				StartedAt: list[0].StartedAt,
				PodUID:    string(p.Spec.UID),
			})
		}
	}
	c.probes.Sync(p.Key, probed)
}

// probedContainers are the containers of spec that run beside each other:
// the sidecars, then the app containers.
func probedContainers(spec *v1.PodSpec) []*v1.Container {
	var out []*v1.Container
	for i := range spec.InitContainers {
		if model.IsSidecar(&spec.InitContainers[i]) {
			out = append(out, &spec.InitContainers[i])
		}
	}
	for i := range spec.Containers {
		out = append(out, &spec.Containers[i])
	}
	return out
}
