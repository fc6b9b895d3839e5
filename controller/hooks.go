package controller

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podstatus"
	"github.com/berth-dev/berth/prober"
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

// unhealthy reports which probe condemned a running container, if any.
func unhealthy(probes Prober, ct *model.Container) (prober.Kind, bool) {
	for _, k := range []prober.Kind{prober.Startup, prober.Liveness} {
		if probes.Result(ct.ID, k) == prober.Failure {
			return k, true
		}
	}
	return "", false
}

// passed is whether a container's probe of kind passed, as podstatus asks.
func passed(probes Prober, kind prober.Kind) func(id string) bool {
	return func(id string) bool { return probes.Result(id, kind) == prober.Success }
}

// syncProbes points probes at the running app containers and
// sidecars of p, byName as currentContainers returns them.
func syncProbes(probes Prober, p *model.Pod, byName map[string][]*model.Container) {
	ip := handlerAddress(byName[model.SandboxName], p.Spec.Spec.HostNetwork)
	var probed []prober.Probed
	if ip == "" {
		// Wait for the sandbox's address.
		probes.Sync(p.Key, nil)
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
	probes.Sync(p.Key, probed)
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
