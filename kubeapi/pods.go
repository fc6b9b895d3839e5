package kubeapi

import (
	"context"

	memdb "github.com/hashicorp/go-memdb"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

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

// PodObject renders a stored pod as a v1.Pod with its status, bound to
// node (spec.nodeName) as the kubelet's static pods are, when node is set;
// its annotations name its source and origin. The one rendering of a pod
// (server.PodObject is this).
func PodObject(p *model.Pod, node string) v1.Pod {
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
	out.Status.Phase = PodStatus(p).Phase
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

// PodStatus is the status PodObject gives p, shared with the stored pod
// (not copied): for reading and encoding only, never to be modified.
func PodStatus(p *model.Pod) v1.PodStatus {
	s := p.Status
	if s.Phase == "" {
		s.Phase = v1.PodPending
	}
	return s
}

// servedPod is PodObject as the Kubernetes API serves it: read-only
// unless the push source owns it.
func (a *API) servedPod(p *model.Pod) *v1.Pod {
	out := PodObject(p, a.o.Node)
	if a.o.PushSource == "" || p.Source != a.o.PushSource {
		out.Annotations[ReadOnlyAnnotation] = "true"
	}
	return &out
}

func (a *API) podsResource() *resource {
	term := newTerminating(a.o.Clock)
	return &resource{
		name: "pods", singular: "pod", kind: "Pod", shortNames: []string{"po"}, namespaced: true,
		apiVersion: "v1", listKind: "PodList",
		zero: func() object { return &v1.Pod{} },
		snapshot: func(_ context.Context, ws memdb.WatchSet) ([]item, error) {
			pods, err := a.o.Store.Pods(ws)
			if err != nil {
				return nil, err
			}
			ctrs, err := a.o.Store.Containers(ws)
			if err != nil {
				return nil, err
			}
			out := make([]item, len(pods), len(pods)+1)
			for i, p := range pods {
				out[i] = item{key: p.Key, render: func() object { return a.servedPod(p) }, ident: p, source: p.Source}
			}
			for _, g := range term.update(pods, ctrs) {
				out = append(out, item{key: g.p.Key, render: func() object { return a.terminatingPod(g) }, ident: g, source: g.p.Source})
			}
			return out, nil
		},
		gone: func(o object) {
			if o.GetDeletionTimestamp() == nil {
				o.SetDeletionTimestamp(&metav1.Time{Time: a.o.Clock.Now()})
			}
		},
		fields: func(o runtime.Object) fields.Set {
			p := o.(*v1.Pod)
			return fields.Set{"spec.nodeName": p.Spec.NodeName, "status.phase": string(p.Status.Phase),
				"spec.restartPolicy": string(p.Spec.RestartPolicy), "spec.schedulerName": p.Spec.SchedulerName,
				"spec.serviceAccountName": p.Spec.ServiceAccountName, "spec.hostNetwork": boolString(p.Spec.HostNetwork),
				"status.podIP": p.Status.PodIP, "status.nominatedNodeName": p.Status.NominatedNodeName}
		},
		columns: podColumns,
		cells:   podCells,
	}
}

// terminatingPod is g's pod as served while its containers stop: with
// deletionTimestamp and its grace period.
func (a *API) terminatingPod(g *gonePod) object {
	out := a.servedPod(g.p)
	out.DeletionTimestamp = &g.at
	if gp := out.Spec.TerminationGracePeriodSeconds; gp != nil {
		out.DeletionGracePeriodSeconds = new(*gp)
	}
	return out
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
