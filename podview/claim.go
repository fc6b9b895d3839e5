package podview

import v1 "k8s.io/api/core/v1"

// ClaimStatus sets c's status (and spec.volumeName) as served when volume
// ("" none) holds its data: Pending until a pod of its source made the
// volume (a claim binds on its first consumer, as with a
// WaitForFirstConsumer class), then Bound to it with its storage request
// as capacity and its access modes. c must be a copy.
func ClaimStatus(c *v1.PersistentVolumeClaim, volume string) {
	c.Status = v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending}
	if volume == "" {
		return
	}
	c.Spec.VolumeName = volume
	c.Status.Phase = v1.ClaimBound
	c.Status.AccessModes = c.Spec.AccessModes
	if q, ok := c.Spec.Resources.Requests[v1.ResourceStorage]; ok {
		c.Status.Capacity = v1.ResourceList{v1.ResourceStorage: q}
	}
}
