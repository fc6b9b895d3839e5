package registry

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/berth-dev/berth/kubeapi/printers"

	memdb "github.com/hashicorp/go-memdb"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podview"
	"github.com/berth-dev/berth/store"
)

// Annotations berth puts on the objects it serves (podview's).
const (
	SourceAnnotation   = podview.SourceAnnotation
	OriginAnnotation   = podview.OriginAnnotation
	RejectedAnnotation = podview.RejectedAnnotation
	ReadOnlyAnnotation = podview.ReadOnlyAnnotation
)

// servedPod is podview.Pod as the Kubernetes API serves it: read-only
// unless the push source owns it.
func (a *kinds) servedPod(p *model.Pod) *v1.Pod {
	out := podview.Pod(p, a.o.Node)
	if a.o.PushSource == "" || p.Source != a.o.PushSource {
		out.Annotations[ReadOnlyAnnotation] = "true"
	}
	return &out
}

func (a *kinds) podsResource() *Kind {
	return &Kind{
		Name: "pods", Writable: true, Singular: "pod", Kind: "Pod", ShortNames: []string{"po"}, Namespaced: true,
		APIVersion: "v1", ListKind: "PodList",
		Zero:   func() Object { return &v1.Pod{} },
		stored: a.podsKind(),
		Fields: func(o runtime.Object) fields.Set {
			p := o.(*v1.Pod)
			return fields.Set{"spec.nodeName": p.Spec.NodeName, "status.phase": string(p.Status.Phase),
				"spec.restartPolicy": string(p.Spec.RestartPolicy), "spec.schedulerName": p.Spec.SchedulerName,
				"spec.serviceAccountName": p.Spec.ServiceAccountName, "spec.hostNetwork": boolString(p.Spec.HostNetwork),
				"status.podIP": p.Status.PodIP, "status.nominatedNodeName": p.Status.NominatedNodeName}
		},
		Columns: printers.PodColumns,
		Cells:   printers.PodCells,
	}
}

// podsKind is the pods as the store holds them: its pods, and the pods
// removed while their containers still run (store.Terminating), served with
// deletionTimestamp until those stop, and then DELETED.
func (a *kinds) podsKind() *storeKind {
	render := func(row any) item {
		switch r := row.(type) {
		case *model.Pod:
			return item{Key: r.Key, Obj: a.servedPod(r), Source: r.Source}
		case *store.Terminating:
			return item{Key: r.Key, Obj: a.terminatingPod(r.Pod, r.At), Source: r.Pod.Source}
		}
		panic(fmt.Sprintf("pods: a row of %T", row))
	}
	podRowKey := func(row any) string {
		if t, ok := row.(*store.Terminating); ok {
			return t.Key
		}
		return row.(*model.Pod).Key
	}
	return &storeKind{
		tables: []string{store.TablePods, store.TableTerminating},
		rows: func(snap store.Snapshot, ws memdb.WatchSet) ([]any, error) {
			pods, err := snap.Pods(ws)
			if err != nil {
				return nil, err
			}
			term, err := snap.Terminating(ws)
			if err != nil {
				return nil, err
			}
			out := make([]any, 0, len(pods)+len(term))
			have := make(map[string]bool, len(pods))
			for _, p := range pods {
				have[p.Key] = true
				out = append(out, p)
			}
			for _, t := range term {
				if !have[t.Key] {
					out = append(out, t)
				}
			}
			slices.SortFunc(out, func(x, y any) int { return strings.Compare(podRowKey(x), podRowKey(y)) })
			return out, nil
		},
		row: func(snap store.Snapshot, key string) (any, error) {
			p, err := snap.Pod(key)
			if err != nil || p != nil {
				return p, err
			}
			t, err := snap.TerminatingPod(key)
			if t == nil || err != nil {
				return nil, err
			}
			return t, nil
		},
		render: render,
		gone: func(d *store.Deletion) item {
			it := render(d.Last)
			if it.Obj.GetDeletionTimestamp() == nil {
				it.Obj.SetDeletionTimestamp(&metav1.Time{Time: d.At})
			}
			return it
		},
		servedBy: func(d *store.Deletion) string {
			if d.Table == store.TablePods {
				return store.TableTerminating
			}
			return ""
		},
	}
}

// terminatingPod is p as served while its containers stop, since at:
// with deletionTimestamp and its grace period.
func (a *kinds) terminatingPod(p *model.Pod, at time.Time) *v1.Pod {
	out := a.servedPod(p)
	out.DeletionTimestamp = &metav1.Time{Time: at}
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
