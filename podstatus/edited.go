package podstatus

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Edited is status, observed for a pod's spec before an edit, as it stands
// in the write of the edit: the containers it replaces (replaced, by name)
// are not ready, nor is the pod once one of them was, as of now. Until the
// controller observes the new spec, no reader takes the old spec's
// readiness for the new one's. status is not modified.
func Edited(status *v1.PodStatus, replaced func(name string) bool, now time.Time) v1.PodStatus {
	out := *status.DeepCopy()
	changed := false
	var unready []string
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
	for _, cs := range out.ContainerStatuses {
		if !cs.Ready {
			unready = append(unready, cs.Name)
		}
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
