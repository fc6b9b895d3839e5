package controller

import (
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podconfig"
)

// bindClaims records in the store the volume of every claim p mounts that
// EnsureClaims made or found (all but failed's): the claim is Bound from
// then on. A binding already recorded is no write.
func (c *Controller) bindClaims(p *model.Pod, failed podconfig.VolumeErrors) {
	for _, v := range p.Spec.Spec.Volumes {
		if v.PersistentVolumeClaim == nil || failed[v.Name] != nil {
			continue
		}
		claim := v.PersistentVolumeClaim.ClaimName
		vol := c.podconfig.ClaimVolume(p.Source, p.Spec.Namespace, claim)
		if err := c.store.SetClaimVolume(p.Source, p.Spec.Namespace+"/"+claim, vol); err != nil {
			c.log.Error("recording a claim's volume", "pod", p.Key, "claim", claim, "volume", vol, "err", err)
		}
	}
}
