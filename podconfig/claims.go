package podconfig

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

// ClaimEngine is the engine's part in EnsureClaims (runtime.Runtime).
type ClaimEngine interface {
	CreateVolume(ctx context.Context, v runtime.VolumeConfig) error
	ListVolumes(ctx context.Context, match map[string]string) ([]runtime.VolumeInfo, error)
}

// HasClaims reports whether pod mounts a PersistentVolumeClaim.
func HasClaims(pod *v1.Pod) bool {
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].PersistentVolumeClaim != nil {
			return true
		}
	}
	return false
}

// ClaimVolume is the engine volume of the pod's claim name.
func (b *Builder) ClaimVolume(namespace, claim string) string {
	return runtime.ClaimVolumeName(namespace, claim, b.cfg.Node)
}

// EnsureClaims makes the engine volume of every PersistentVolumeClaim p
// mounts, as the first pod using it, and returns the volumes p may not
// use: a claim whose volume a pod of another source made (a pod uses only
// its own source's data), or one the engine failed to make. The volume is
// never removed with a pod: data outlives pods, as a claim's does.
func (b *Builder) EnsureClaims(ctx context.Context, engine ClaimEngine, p *model.Pod) VolumeErrors {
	pod := p.Spec
	var failed VolumeErrors
	fail := failed.Add
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim == nil {
			continue
		}
		claim := v.PersistentVolumeClaim.ClaimName
		vols, err := engine.ListVolumes(ctx, map[string]string{runtime.LabelManaged: "true", runtime.LabelNode: b.cfg.Node,
			runtime.LabelClaimNamespace: pod.Namespace, runtime.LabelClaimName: claim})
		if err != nil {
			fail(v.Name, err)
			continue
		}
		if len(vols) > 0 {
			if src := vols[0].Labels[runtime.LabelSource]; src != p.Source {
				fail(v.Name, fmt.Errorf("persistentvolumeclaim %q holds the data of source %q; a pod may use only its own source's claims, and this pod is from %q", claim, src, p.Source))
			}
			continue
		}
		err = engine.CreateVolume(ctx, runtime.VolumeConfig{Name: b.ClaimVolume(pod.Namespace, claim), Persistent: true,
			Labels: runtime.ClaimVolumeLabels(pod.Namespace, claim, b.cfg.Node, p.Source)})
		if err != nil {
			fail(v.Name, err)
		}
	}
	return failed
}

// VolumeErrors are the volumes of a pod that cannot be used now, with the
// reason; the containers mounting them wait. The zero value is empty.
type VolumeErrors map[string]error

// Add records volume's error.
func (v *VolumeErrors) Add(volume string, err error) {
	if *v == nil {
		*v = VolumeErrors{}
	}
	(*v)[volume] = err
}
