// Package podview is a stored pod as the Kubernetes API serves it: the
// one rendering that the HTTP API, the Kubernetes API and the etcd status
// publisher share, and the annotations berth puts on what it serves.
package podview

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/model"
)

// Annotations berth puts on the objects it serves.
const (
	// SourceAnnotation names the source that owns the object.
	SourceAnnotation = "berth.io/source"
	// OriginAnnotation is the file, URL or key the object came from.
	OriginAnnotation = "berth.io/origin"
	// RejectedAnnotation is the last rejected update, kept while the last
	// good one stays.
	RejectedAnnotation = "berth.io/rejected-update"
	// ReadOnlyAnnotation ("true") marks an object of a source other than
	// the push source: the API refuses to change it.
	ReadOnlyAnnotation = "berth.io/read-only"
)

// Pod renders a stored pod as a v1.Pod with its status, bound to node
// (spec.nodeName) as the kubelet's static pods are, when node is set; its
// annotations name its source and origin. The result is a copy the caller
// may change.
func Pod(p *model.Pod, node string) v1.Pod {
	out := *p.Spec.DeepCopy()
	if node != "" {
		out.Spec.NodeName = node
	}
	if out.Spec.SecurityContext == nil {
		// The apiserver defaults it to {}; kubectl debug dereferences it.
		out.Spec.SecurityContext = &v1.PodSecurityContext{}
	}
	out.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	out.Status = *p.Status.DeepCopy()
	out.Status.Phase = Status(p).Phase
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[SourceAnnotation] = p.Source
	out.Annotations[OriginAnnotation] = p.Origin
	if p.Error != "" {
		out.Annotations[RejectedAnnotation] = p.Error
	}
	out.CreationTimestamp = metav1.Time{Time: p.SeenAt}
	return out
}

// Status is the status Pod gives p, shared with the stored pod (not
// copied): for reading and encoding only, never to be modified.
func Status(p *model.Pod) v1.PodStatus {
	s := p.Status
	if s.Phase == "" {
		s.Phase = v1.PodPending
	}
	return s
}
