package manifest

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Warnings returns the paths of the fields of pod that are set but not
// applicable without a cluster (podFields), plus ephemeral-storage
// resources, which berth accepts but does not enforce. The pod is accepted all the same.
func Warnings(pod *v1.Pod) []string {
	var paths []string
	for _, f := range classedFields(&pod.Spec) {
		if f.rule.class == notApplicable {
			paths = append(paths, f.path.String())
		}
	}
	sp := field.NewPath("spec")
	for _, list := range []struct {
		name string
		ctrs []v1.Container
	}{{"initContainers", pod.Spec.InitContainers}, {"containers", pod.Spec.Containers}} {
		for i, c := range list.ctrs {
			rp := sp.Child(list.name).Index(i).Child("resources")
			if _, ok := c.Resources.Limits[v1.ResourceEphemeralStorage]; ok {
				paths = append(paths, rp.Child("limits").Key(string(v1.ResourceEphemeralStorage)).String())
			}
			if _, ok := c.Resources.Requests[v1.ResourceEphemeralStorage]; ok {
				paths = append(paths, rp.Child("requests").Key(string(v1.ResourceEphemeralStorage)).String())
			}
		}
	}
	return paths
}

// WarningLine is the one warning line of a loaded pod,
// "origin: ns/name: ignored without a cluster: path, path", or "" when the
// pod sets no such field.
func WarningLine(d Desired) string {
	paths := Warnings(d.Pod)
	if len(paths) == 0 {
		return ""
	}
	return d.Origin + ": " + PodKey(d.Pod.Namespace, d.Pod.Name) + ": ignored without a cluster: " + strings.Join(paths, ", ")
}
