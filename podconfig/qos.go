package podconfig

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-dev/berth/resourcehelper"
)

// OOM score adjustments as the kubelet sets them (pkg/kubelet/qos/policy.go).
const (
	sandboxOOMScoreAdj    = -998
	guaranteedOOMScoreAdj = -997
	besteffortOOMScoreAdj = 1000
)

// QOSClass is the pod's QoS class, computed as the kubelet's GetPodQOS does
// for cpu and memory over init and app containers: BestEffort when no
// container requests or limits either, Guaranteed when every container
// limits both and requests equal limits, else Burstable. Pod-level
// spec.resources, when set, decide alone.
func QOSClass(pod *v1.Pod) v1.PodQOSClass {
	if q, ok := podLevelQOS(pod.Spec.Resources); ok {
		return q
	}
	requests, limits := v1.ResourceList{}, v1.ResourceList{}
	guaranteed := true
	var all []v1.Container
	all = append(all, pod.Spec.InitContainers...)
	all = append(all, pod.Spec.Containers...)
	for _, c := range all {
		for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			if q, ok := c.Resources.Requests[name]; ok && !q.IsZero() {
				add(requests, name, q)
			}
			q, ok := c.Resources.Limits[name]
			if ok && !q.IsZero() {
				add(limits, name, q)
			} else {
				guaranteed = false
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return v1.PodQOSBestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				guaranteed = false
			}
		}
	}
	if guaranteed && len(limits) == 2 {
		return v1.PodQOSGuaranteed
	}
	return v1.PodQOSBurstable
}

// podLevelQOS is the class pod-level resources r give (ok false when they
// set neither cpu nor memory): requests (defaulted to limits) and limits
// both of cpu and memory and equal are Guaranteed.
func podLevelQOS(r *v1.ResourceRequirements) (v1.PodQOSClass, bool) {
	if r == nil {
		return "", false
	}
	requests, limits := v1.ResourceList{}, v1.ResourceList{}
	set := false
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		q, ok := resourcehelper.Request(*r, name)
		set = set || ok
		if ok && q.Sign() > 0 {
			requests[name] = q
		}
		if q, ok := r.Limits[name]; ok && q.Sign() > 0 {
			limits[name] = q
		}
	}
	switch {
	case !set:
		return "", false
	case len(requests) == 0 && len(limits) == 0:
		return v1.PodQOSBestEffort, true
	case len(limits) < 2 || len(requests) != len(limits):
		return v1.PodQOSBurstable, true
	}
	for name, req := range requests {
		if lim := limits[name]; lim.Cmp(req) != 0 {
			return v1.PodQOSBurstable, true
		}
	}
	return v1.PodQOSGuaranteed, true
}

func add(rl v1.ResourceList, name v1.ResourceName, q resource.Quantity) {
	cur := rl[name]
	cur.Add(q)
	rl[name] = cur
}

// oomScoreAdj is the container's oom_score_adj as the kubelet computes it:
// node-critical pods (berth's pods are static pods, so priorityClassName
// system-node-critical) and Guaranteed pods -997, BestEffort 1000, Burstable
// 1000 - 1000*request/capacity clamped to [3, 999] (an unset request is the
// limit, as API defaulting makes it).
func oomScoreAdj(pod *v1.Pod, c *v1.Container, memCapacity int64) int {
	if pod.Spec.PriorityClassName == "system-node-critical" {
		return guaranteedOOMScoreAdj
	}
	switch QOSClass(pod) {
	case v1.PodQOSGuaranteed:
		return guaranteedOOMScoreAdj
	case v1.PodQOSBestEffort:
		return besteffortOOMScoreAdj
	}
	if memCapacity <= 0 {
		return besteffortOOMScoreAdj - 1
	}
	req := c.Resources.Limits.Memory().Value() // requests default to limits
	if q, ok := c.Resources.Requests[v1.ResourceMemory]; ok {
		req = q.Value()
	}
	adj := 1000 - (1000*req)/memCapacity
	if adj < 1000+guaranteedOOMScoreAdj {
		return 1000 + guaranteedOOMScoreAdj
	}
	if adj == besteffortOOMScoreAdj {
		return besteffortOOMScoreAdj - 1
	}
	return int(adj)
}

// clampOOM raises a negative adjustment to 0 where the host refuses them.
func (b *Builder) clampOOM(adj int) int {
	if b.cfg.NodeInfo.NoNegativeOOMScores && adj < 0 {
		return 0
	}
	return adj
}
