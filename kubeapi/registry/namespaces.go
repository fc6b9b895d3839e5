package registry

import (
	"context"
	"strings"
	"time"

	"github.com/berth-dev/berth/kubeapi/printers"

	memdb "github.com/hashicorp/go-memdb"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-dev/berth/model"
)

// namespacesResource serves the namespaces berth's objects are in, and
// default: Active, created when berth first saw them (k9s and kubectl get
// ns list them; berth keeps no namespace objects of its own). Push-scoped
// requests see default and the namespaces of the push source's objects
// only, the namespaces their token can read anything in.
func (a *kinds) namespacesResource() *Kind {
	res := a.namespacesView(nil)
	res.Push = a.namespacesView(a.pushFilter)
	return res
}

// namespacesView is the namespaces kind over the objects of the sources
// only selects (nil: all). Each view has its own creation times: a
// namespace is created, for a push token, when its source first uses it,
// so its age tells nothing of another source's.
func (a *kinds) namespacesView(only sourceFilter) *Kind {
	seen := &firstSeen{}
	return &Kind{
		Name: "namespaces", Singular: "namespace", Kind: "Namespace", ShortNames: []string{"ns"},
		APIVersion: "v1", ListKind: "NamespaceList",
		Zero: func() Object { return &v1.Namespace{} },
		snapshot: func(_ context.Context, ws memdb.WatchSet) ([]item, error) {
			names := map[string]bool{metav1.NamespaceDefault: true}
			pods, err := a.o.Store.Pods(ws)
			if err != nil {
				return nil, err
			}
			for _, p := range pods {
				if only == nil || only(p.Source) {
					names[p.Spec.Namespace] = true
				}
			}
			for _, kind := range model.ObjectKinds {
				objs, err := a.o.Store.Snapshot().Objects(ws, kind)
				if err != nil {
					return nil, err
				}
				for _, o := range objs {
					if only == nil || only(o.Source) {
						ns, _, _ := strings.Cut(o.Key, "/")
						names[ns] = true
					}
				}
			}
			seen.keep(names)
			now := a.o.Clock.Now()
			var out []item
			for ns := range names {
				n := &v1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
					ObjectMeta: metav1.ObjectMeta{Name: ns, UID: derivedUID("namespace", ns),
						CreationTimestamp: metav1.Time{Time: seen.get(ns, now)},
						Labels:            map[string]string{"kubernetes.io/metadata.name": ns}},
					Spec:   v1.NamespaceSpec{Finalizers: []v1.FinalizerName{v1.FinalizerKubernetes}},
					Status: v1.NamespaceStatus{Phase: v1.NamespaceActive}}
				out = append(out, item{Key: ns, Obj: n, ident: ns + "\x00" + n.CreationTimestamp.String()})
			}
			return out, nil
		},
		Fields: func(o runtime.Object) fields.Set {
			return fields.Set{"status.phase": string(o.(*v1.Namespace).Status.Phase)}
		},
		Columns: []metav1.TableColumnDefinition{printers.NameColumn,
			{Name: "Status", Type: "string", Description: "The status of the namespace"}, printers.AgeColumn},
		Cells: func(o runtime.Object, now time.Time) ([]any, []metav1.TableRowCondition) {
			n := o.(*v1.Namespace)
			return []any{n.Name, string(n.Status.Phase), printers.Age(n.CreationTimestamp, now)}, nil
		},
	}
}
