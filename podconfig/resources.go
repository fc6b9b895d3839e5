package podconfig

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-dev/berth/runtime"
)

// resources maps requests and limits onto Docker's knobs as the kubelet
// does: CPU shares from the request (the limit when none is requested, 2
// when neither), a CFS quota from the limit, the memory limit with no swap
// beyond it. A memory request sets nothing. A limit the container leaves
// unset (or zero) is the pod's spec.resources limit, as the kubelet gives a
// container of a pod with pod-level resources; berth has no pod cgroup, so
// a pod-level limit bounds each such container, not their sum.
func resources(pod *v1.Pod, ctr *v1.Container) runtime.Resources {
	r := runtime.Resources{CPUShares: 2}
	req, hasReq := ctr.Resources.Requests[v1.ResourceCPU]
	lim, hasLim := limit(pod, ctr, v1.ResourceCPU)
	switch {
	case hasReq:
		r.CPUShares = max(req.MilliValue()*1024/1000, 2)
	case hasLim:
		r.CPUShares = max(lim.MilliValue()*1024/1000, 2) // requests default to limits
	}
	if hasLim {
		r.CPUPeriod = 100000
		r.CPUQuota = max(lim.MilliValue()*r.CPUPeriod/1000, 1000) // the kernel's minimum quota
	}
	if q, ok := limit(pod, ctr, v1.ResourceMemory); ok {
		r.Memory = q.Value()
		r.MemorySwap = r.Memory
	}
	return r
}

// limit is ctr's non-zero limit of name, else the pod's.
func limit(pod *v1.Pod, ctr *v1.Container, name v1.ResourceName) (resource.Quantity, bool) {
	if q, ok := ctr.Resources.Limits[name]; ok && !q.IsZero() {
		return q, true
	}
	if pr := pod.Spec.Resources; pr != nil {
		if q, ok := pr.Limits[name]; ok && !q.IsZero() {
			return q, true
		}
	}
	return resource.Quantity{}, false
}
