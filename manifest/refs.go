package manifest

import (
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
)

// Ref is one use of a ConfigMap or Secret by a pod.
type Ref struct {
	Kind     string // model.KindConfigMap, model.KindSecret or model.KindPVC
	Name     string
	Optional bool
	// Volume is the pod volume that projects it, "" for env, envFrom and
	// imagePullSecrets.
	Volume string
	// Container is the container whose env or envFrom reads it, "" for a
	// volume or an imagePullSecret.
	Container string
	// PullSecret marks an imagePullSecrets entry (never required: the
	// kubelet pulls without a missing one).
	PullSecret bool
}

// References lists every use of a ConfigMap, Secret or claim in pod, in
// spec order: volumes (configMap, secret, projected sources,
// persistentVolumeClaim), then each init
// and app container's env and envFrom, then imagePullSecrets.
func References(pod *v1.Pod) []Ref {
	var refs []Ref
	opt := func(b *bool) bool { return b != nil && *b }
	for _, vol := range pod.Spec.Volumes {
		if cm := vol.ConfigMap; cm != nil {
			refs = append(refs, Ref{Kind: model.KindConfigMap, Name: cm.Name, Optional: opt(cm.Optional), Volume: vol.Name})
		}
		if s := vol.Secret; s != nil {
			refs = append(refs, Ref{Kind: model.KindSecret, Name: s.SecretName, Optional: opt(s.Optional), Volume: vol.Name})
		}
		if c := vol.PersistentVolumeClaim; c != nil {
			refs = append(refs, Ref{Kind: model.KindPVC, Name: c.ClaimName, Volume: vol.Name})
		}
		if pr := vol.Projected; pr != nil {
			for _, src := range pr.Sources {
				if cm := src.ConfigMap; cm != nil {
					refs = append(refs, Ref{Kind: model.KindConfigMap, Name: cm.Name, Optional: opt(cm.Optional), Volume: vol.Name})
				}
				if s := src.Secret; s != nil {
					refs = append(refs, Ref{Kind: model.KindSecret, Name: s.Name, Optional: opt(s.Optional), Volume: vol.Name})
				}
			}
		}
	}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			refs = append(refs, ContainerEnvRefs(&list[i])...)
		}
	}
	for _, ps := range pod.Spec.ImagePullSecrets {
		if ps.Name != "" {
			refs = append(refs, Ref{Kind: model.KindSecret, Name: ps.Name, Optional: true, PullSecret: true})
		}
	}
	return refs
}

// ContainerEnvRefs lists the objects c's env and envFrom read.
func ContainerEnvRefs(c *v1.Container) []Ref {
	var refs []Ref
	opt := func(b *bool) bool { return b != nil && *b }
	for _, e := range c.EnvFrom {
		if r := e.ConfigMapRef; r != nil {
			refs = append(refs, Ref{Kind: model.KindConfigMap, Name: r.Name, Optional: opt(r.Optional), Container: c.Name})
		}
		if r := e.SecretRef; r != nil {
			refs = append(refs, Ref{Kind: model.KindSecret, Name: r.Name, Optional: opt(r.Optional), Container: c.Name})
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			continue
		}
		if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
			refs = append(refs, Ref{Kind: model.KindConfigMap, Name: r.Name, Optional: opt(r.Optional), Container: c.Name})
		}
		if r := e.ValueFrom.SecretKeyRef; r != nil {
			refs = append(refs, Ref{Kind: model.KindSecret, Name: r.Name, Optional: opt(r.Optional), Container: c.Name})
		}
	}
	return refs
}

// RefKeys are the distinct model.ObjectRefs of pod's References, sorted.
func RefKeys(pod *v1.Pod) []string {
	var keys []string
	for _, r := range References(pod) {
		keys = append(keys, model.ObjectRef(r.Kind, PodKey(pod.Namespace, r.Name)))
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}
