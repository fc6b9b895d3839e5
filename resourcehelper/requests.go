// Package resourcehelper computes what a pod requests of the node, as
// Kubernetes' component-helpers/resource does: the aggregate of its
// containers (sidecars and init containers included), pod-level requests and
// overhead. Validation, admission's node fit and QoS classes share it.
package resourcehelper

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Requests are the cpu (millicores) and memory (bytes) a pod or its
// containers request.
type Requests struct {
	CPUMilli, Memory int64
}

// Plus is r and o added.
func (r Requests) Plus(o Requests) Requests {
	return Requests{r.CPUMilli + o.CPUMilli, r.Memory + o.Memory}
}

func (r Requests) max(o Requests) Requests {
	return Requests{max(r.CPUMilli, o.CPUMilli), max(r.Memory, o.Memory)}
}

// ContainerRequests is what spec's containers request together, as
// component-helpers' AggregateContainerRequests computes it: the app
// containers' sum, with sidecars (init containers with restartPolicy
// Always) added to it, and at least the largest need while an init
// container runs (that container plus the sidecars started before it).
// A container's unset request is its limit, as API defaulting makes it.
func ContainerRequests(spec *v1.PodSpec) Requests {
	var sum Requests
	for i := range spec.Containers {
		sum = sum.Plus(resourcesRequests(spec.Containers[i].Resources))
	}
	var sidecars, initMax Requests
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		r := resourcesRequests(c.Resources)
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			sum = sum.Plus(r)
			sidecars = sidecars.Plus(r)
			initMax = initMax.max(sidecars)
			continue
		}
		initMax = initMax.max(sidecars.Plus(r))
	}
	return sum.max(initMax)
}

// PodRequests is what the pod asks of the node, as the kubelet's admission
// counts it (component-helpers PodRequests): ContainerRequests, replaced by
// spec.resources' requests for the resources they name, plus spec.overhead.
func PodRequests(spec *v1.PodSpec) Requests {
	sum := ContainerRequests(spec)
	if pr := spec.Resources; pr != nil {
		if q, ok := Request(*pr, v1.ResourceCPU); ok {
			sum.CPUMilli = q.MilliValue()
		}
		if q, ok := Request(*pr, v1.ResourceMemory); ok {
			sum.Memory = q.Value()
		}
	}
	if o := spec.Overhead; o != nil {
		sum = sum.Plus(Requests{o.Cpu().MilliValue(), o.Memory().Value()})
	}
	return sum
}

func resourcesRequests(r v1.ResourceRequirements) Requests {
	var out Requests
	if q, ok := Request(r, v1.ResourceCPU); ok {
		out.CPUMilli = q.MilliValue()
	}
	if q, ok := Request(r, v1.ResourceMemory); ok {
		out.Memory = q.Value()
	}
	return out
}

// Request is r's request of name, defaulted to its limit as the API server
// defaults a container's and the pod level's requests.
func Request(r v1.ResourceRequirements, name v1.ResourceName) (resource.Quantity, bool) {
	if q, ok := r.Requests[name]; ok {
		return q, true
	}
	q, ok := r.Limits[name]
	return q, ok
}
