package registry

import (
	"context"
	"time"

	"github.com/berth-dev/berth/kubeapi/printers"

	memdb "github.com/hashicorp/go-memdb"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// LeaseGroupVersion is the served version of coordination.k8s.io: the
// node's lease, which kubectl describe node shows.
const LeaseGroupVersion = "coordination.k8s.io/v1"

// leaseDuration is the node lease's duration, the kubelet's default; a
// berth that answers is alive, so its lease is renewed as it is read
// (RenewTime is the read time, to leaseRenew).
const (
	leaseDuration = 40 * time.Second
	leaseRenew    = 10 * time.Second
)

func (a *kinds) leasesResource() *Kind {
	return &Kind{
		Name: "leases", Singular: "lease", Kind: "Lease", Namespaced: true,
		APIVersion: LeaseGroupVersion, ListKind: "LeaseList", Poll: leaseRenew,
		Zero: func() Object { return &coordinationv1.Lease{} },
		snapshot: func(ctx context.Context, ws memdb.WatchSet) ([]item, error) {
			renew := metav1.NewMicroTime(a.o.Clock.Now().Truncate(leaseRenew))
			holder, secs := a.o.Node, int32(leaseDuration/time.Second)
			l := &coordinationv1.Lease{TypeMeta: metav1.TypeMeta{APIVersion: LeaseGroupVersion, Kind: "Lease"},
				ObjectMeta: metav1.ObjectMeta{Name: a.o.Node, Namespace: v1.NamespaceNodeLease, UID: derivedUID("lease", a.o.Node),
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: a.o.Node, UID: derivedUID("node", a.o.Node)}}},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: &renew}}
			return []item{{Key: v1.NamespaceNodeLease + "/" + a.o.Node, Obj: l}}, nil
		},
		Columns: []metav1.TableColumnDefinition{printers.NameColumn,
			{Name: "Holder", Type: "string", Description: "The holder of the lease."}, printers.AgeColumn},
		Cells: func(o runtime.Object, now time.Time) ([]any, []metav1.TableRowCondition) {
			l := o.(*coordinationv1.Lease)
			return []any{l.Name, *l.Spec.HolderIdentity, printers.Age(l.CreationTimestamp, now)}, nil
		},
	}
}
