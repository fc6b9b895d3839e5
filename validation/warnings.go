package validation

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Warning is a set field of a pod that berth accepts and does not act on.
type Warning struct {
	Path   string
	Reason string // the field table's (podFields)
	// NotEnforced: a kubelet would act on the field and berth does not;
	// otherwise the field is meaningless without a cluster.
	NotEnforced bool
}

// builtinPriorities are the values the API server gives the built-in
// priority classes. A pod that states its class's own value, as kubeadm's
// static pods do, sets nothing berth ignores: the class is mapped.
var builtinPriorities = map[string]int32{
	"system-node-critical":    2000001000,
	"system-cluster-critical": 2000000000,
}

// Warnings returns, in spec order, the set fields of pod that podFields
// classes not applicable or not enforced, then the ephemeral-storage
// resources, which berth does not enforce. The pod is accepted all the
// same.
func Warnings(pod *v1.Pod) []Warning {
	var out []Warning
	for _, f := range classedFields(&pod.Spec) {
		if f.rule.class != notApplicable && f.rule.class != notEnforced {
			continue
		}
		if f.path.String() == "spec.priority" && pod.Spec.Priority != nil {
			if v, ok := builtinPriorities[pod.Spec.PriorityClassName]; ok && v == *pod.Spec.Priority {
				continue
			}
		}
		out = append(out, Warning{Path: f.path.String(), Reason: f.rule.what, NotEnforced: f.rule.class == notEnforced})
	}
	sp := field.NewPath("spec")
	const ephemeral = "berth does not limit a container's disk use"
	for _, list := range []struct {
		name string
		ctrs []v1.Container
	}{{"initContainers", pod.Spec.InitContainers}, {"containers", pod.Spec.Containers}} {
		for i, c := range list.ctrs {
			rp := sp.Child(list.name).Index(i).Child("resources")
			if _, ok := c.Resources.Limits[v1.ResourceEphemeralStorage]; ok {
				out = append(out, Warning{rp.Child("limits").Key(string(v1.ResourceEphemeralStorage)).String(), ephemeral, true})
			}
			if _, ok := c.Resources.Requests[v1.ResourceEphemeralStorage]; ok {
				out = append(out, Warning{rp.Child("requests").Key(string(v1.ResourceEphemeralStorage)).String(), ephemeral, true})
			}
		}
	}
	return out
}
