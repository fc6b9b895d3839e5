package validation

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/berth-dev/berth/resourcehelper"
)

var podLevelResources = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory}

// validatePodResources checks spec.resources as the API server does: cpu
// and memory only, none negative, requests not above limits, the
// containers' aggregate requests not above the pod's, no app container's
// limit above the pod's.
func validatePodResources(spec *v1.PodSpec, sp *field.Path) field.ErrorList {
	r := spec.Resources
	if r == nil {
		return nil
	}
	p := sp.Child("resources")
	var errs field.ErrorList
	for _, list := range []struct {
		name string
		rl   v1.ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		for _, name := range sortedResourceNames(list.rl) {
			qp := p.Child(list.name).Key(string(name))
			switch q := list.rl[name]; {
			case strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix):
				errs = append(errs, notSupported(qp, "hugepages are not implemented"))
			case name != v1.ResourceCPU && name != v1.ResourceMemory:
				errs = append(errs, field.NotSupported(qp, name, podLevelResources))
			case q.Sign() < 0:
				errs = append(errs, field.Invalid(qp, q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	for _, name := range sortedResourceNames(r.Requests) {
		req := r.Requests[name]
		if lim, ok := r.Limits[name]; ok && req.Cmp(lim) > 0 {
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), req.String(),
				fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	agg := resourcehelper.ContainerRequests(spec)
	for _, name := range podLevelResources {
		pod, ok := resourcehelper.Request(*r, name)
		if !ok {
			continue
		}
		ctrs := *resource.NewQuantity(agg.Memory, resource.BinarySI)
		if name == v1.ResourceCPU {
			ctrs = *resource.NewMilliQuantity(agg.CPUMilli, resource.DecimalSI)
		}
		if ctrs.Cmp(pod) > 0 {
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), pod.String(),
				"must be greater than or equal to aggregate container requests of "+ctrs.String()))
		}
	}
	for i, c := range spec.Containers {
		for _, name := range podLevelResources {
			cl, has := c.Resources.Limits[name]
			pl, podHas := r.Limits[name]
			if has && podHas && cl.Cmp(pl) > 0 {
				errs = append(errs, field.Invalid(sp.Child("containers").Index(i).Child("resources", "limits").Key(string(name)),
					cl.String(), "must be less than or equal to pod limits of "+pl.String()))
			}
		}
	}
	return errs
}
