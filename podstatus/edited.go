package podstatus

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/model"
)

// Edited is status, observed for a pod's spec before an edit, as it stands
// in the write of the edit: the containers it replaces (replaced, by name)
// are not ready, nor is the pod once one of them was, as of now. Until the
// controller observes the new spec, no reader takes the old spec's
// readiness for the new one's. status is not modified.
func Edited(pod *v1.Pod, status *v1.PodStatus, replaced func(name string) bool, now time.Time) v1.PodStatus {
	out := *status.DeepCopy()
	changed := false
	for _, list := range [][]v1.ContainerStatus{out.InitContainerStatuses, out.ContainerStatuses} {
		for i := range list {
			if list[i].Ready && replaced(list[i].Name) {
				list[i].Ready, changed = false, true
			}
		}
	}
	if !changed {
		return out
	}
	// As podConditions lists them: sidecars first, then app containers.
	var unready []string
	for _, cs := range out.InitContainerStatuses {
		for i := range pod.Spec.InitContainers {
			if ic := &pod.Spec.InitContainers[i]; ic.Name == cs.Name && model.IsSidecar(ic) && !cs.Ready {
				unready = append(unready, cs.Name)
			}
		}
	}
	for _, cs := range out.ContainerStatuses {
		if !cs.Ready {
			unready = append(unready, cs.Name)
		}
	}
	if len(unready) == 0 {
		return out // a regular init container: the pod's readiness is not its
	}
	for i := range out.Conditions {
		c := &out.Conditions[i]
		if c.Type != v1.PodReady && c.Type != v1.ContainersReady {
			continue
		}
		if c.Status != v1.ConditionFalse {
			c.LastTransitionTime = metav1.Time{Time: now}
		}
		c.Status, c.Reason = v1.ConditionFalse, "ContainersNotReady"
		c.Message = fmt.Sprintf("containers with unready status: %s", unready)
	}
	return out
}
