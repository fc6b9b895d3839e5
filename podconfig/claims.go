package podconfig

import (
	"context"
	"fmt"
	"slices"

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

// ClaimVolume is the engine volume of claim namespace/claim of source's
// pods.
func (b *Builder) ClaimVolume(source, namespace, claim string) string {
	return runtime.ClaimVolumeName(source, namespace, claim, b.cfg.Node)
}

// EnsureClaims makes the engine volume of every PersistentVolumeClaim p
// mounts, as the first pod of its source using it (each source has its own
// claims' data, as its own objects), and returns the volumes p may not
// use: one the engine failed to make, or a volume of that name berth did
// not label for the claim. The volume is never removed with a pod: data
// outlives pods, as a claim's does.
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
		want := runtime.ClaimVolumeLabels(pod.Namespace, claim, b.cfg.Node, p.Source)
		name := b.ClaimVolume(p.Source, pod.Namespace, claim)
		if err := engine.CreateVolume(ctx, runtime.VolumeConfig{Name: name, Persistent: true, Labels: want}); err != nil {
			fail(v.Name, err)
			continue
		}
		// The engine answers a create with the volume of that name if one
		// is there, whatever its labels: it must be this claim's.
		vols, err := engine.ListVolumes(ctx, want)
		if err != nil {
			fail(v.Name, err)
			continue
		}
		if !slices.ContainsFunc(vols, func(vi runtime.VolumeInfo) bool { return vi.Name == name }) {
			fail(v.Name, fmt.Errorf("persistentvolumeclaim %q: the engine has a volume %s that berth did not make for it", claim, name))
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
