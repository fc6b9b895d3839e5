package admission

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// requests is what a pod asks of the node: CPU in millicores, memory in
// bytes.
type requests struct {
	cpu, memory int64
}

func (r requests) plus(o requests) requests { return requests{r.cpu + o.cpu, r.memory + o.memory} }

func (r requests) max(o requests) requests {
	return requests{max(r.cpu, o.cpu), max(r.memory, o.memory)}
}

// podRequests is the pod's cpu and memory request as the kubelet's
// admission counts it (component-helpers resource.PodRequests): the app
// containers' sum, with sidecars (init containers with restartPolicy
// Always) added to it, at least the largest need while an init container
// runs (that container plus the sidecars started before it); then pod-level
// spec.resources.requests replace the container sum for the resources they
// name; then spec.overhead is added. A container's unset request is its
// limit, as the API server's defaulting makes it; so is the pod level's.
func podRequests(pod *v1.Pod) requests {
	var sum requests
	for i := range pod.Spec.Containers {
		sum = sum.plus(containerRequests(pod.Spec.Containers[i].Resources))
	}
	var sidecars, initMax requests
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		r := containerRequests(c.Resources)
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			sum = sum.plus(r)
			sidecars = sidecars.plus(r)
			initMax = initMax.max(sidecars)
			continue
		}
		initMax = initMax.max(sidecars.plus(r))
	}
	sum = sum.max(initMax)
	if pr := pod.Spec.Resources; pr != nil {
		if q, ok := request(*pr, v1.ResourceCPU); ok {
			sum.cpu = q.MilliValue()
		}
		if q, ok := request(*pr, v1.ResourceMemory); ok {
			sum.memory = q.Value()
		}
	}
	if o := pod.Spec.Overhead; o != nil {
		sum = sum.plus(requests{o.Cpu().MilliValue(), o.Memory().Value()})
	}
	return sum
}

func containerRequests(r v1.ResourceRequirements) requests {
	var out requests
	if q, ok := request(r, v1.ResourceCPU); ok {
		out.cpu = q.MilliValue()
	}
	if q, ok := request(r, v1.ResourceMemory); ok {
		out.memory = q.Value()
	}
	return out
}

// request is r's request of name, defaulted to its limit.
func request(r v1.ResourceRequirements, name v1.ResourceName) (q resource.Quantity, ok bool) {
	if q, ok := r.Requests[name]; ok {
		return q, true
	}
	q, ok = r.Limits[name]
	return q, ok
}
