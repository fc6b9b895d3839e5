package registry

import (
	memdb "github.com/hashicorp/go-memdb"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/kubeapi/printers"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podview"
	"github.com/berth-dev/berth/store"
)

// claimRow is a claim joined with the volumes of its key (vols nil: none
// yet). A value, so that equal parts are the same row to the cache.
type claimRow struct {
	obj  *model.Object
	vols *store.ClaimVolumes
}

// Current is the claim's version: created with its object, modified by the
// newer write of its parts.
func (r claimRow) Current() model.Version {
	v := r.obj.Current()
	if r.vols != nil {
		v.ModifyIndex = max(v.ModifyIndex, r.vols.ModifyIndex)
	}
	return v
}

// volume is the engine volume of the claim's source, "" when none.
func (r claimRow) volume() string {
	if r.vols == nil {
		return ""
	}
	return r.vols.Volumes[r.obj.Source]
}

func (a *kinds) claimsResource() *Kind {
	seen := &firstSeen{}
	return &Kind{
		Name: "persistentvolumeclaims", Writable: true, Singular: "persistentvolumeclaim", Kind: "PersistentVolumeClaim", ShortNames: []string{"pvc"},
		Namespaced: true, APIVersion: "v1", ListKind: "PersistentVolumeClaimList",
		Zero:   func() Object { return &v1.PersistentVolumeClaim{} },
		stored: a.claimsKind(seen),
		Columns: []metav1.TableColumnDefinition{printers.NameColumn,
			{Name: "Status", Type: "string", Description: "Phase represents the current phase of PersistentVolumeClaim."},
			{Name: "Volume", Type: "string", Description: "VolumeName is the binding reference to the PersistentVolume backing this claim."},
			{Name: "Capacity", Type: "string", Description: "Capacity represents the actual resources of the underlying volume."},
			{Name: "Access Modes", Type: "string", Description: "AccessModes contains the actual access modes the volume backing the PVC has."},
			{Name: "StorageClass", Type: "string", Description: "StorageClassName is the name of the StorageClass required by the claim."},
			{Name: "VolumeAttributesClass", Type: "string", Description: "The VolumeAttributesClass used by this claim."},
			printers.AgeColumn,
			{Name: "VolumeMode", Type: "string", Priority: 1, Description: "volumeMode defines what type of volume is required by the claim."}},
		Cells: printers.ClaimCells,
	}
}

// claimsKind is the claims as the store holds them: each declared claim
// joined with the volumes at its key, Bound once its source's volume
// exists (store.ClaimVolumes), a binding being a change of the claim.
func (a *kinds) claimsKind(seen *firstSeen) *storeKind {
	render := func(row any) item {
		r := row.(claimRow)
		c := r.obj.PVC.DeepCopy()
		c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}
		a.objectMeta(&c.ObjectMeta, r.obj, seen)
		podview.ClaimStatus(c, r.volume())
		return item{Key: r.obj.Key, Obj: c, Source: r.obj.Source}
	}
	join := func(obj, part any) any {
		if obj == nil {
			return nil
		}
		vols, _ := part.(*store.ClaimVolumes)
		return claimRow{obj: obj.(*model.Object), vols: vols}
	}
	return &storeKind{
		tables: []string{store.ObjectTable(model.KindPVC), store.TableClaimVolumes},
		rows: func(snap store.Snapshot, ws memdb.WatchSet) ([]any, error) {
			objs, err := snap.Objects(ws, model.KindPVC)
			if err != nil {
				return nil, err
			}
			out := make([]any, len(objs))
			keys := make(map[string]bool, len(objs))
			for i, o := range objs {
				keys[o.Ref] = true
				vols, err := snap.ClaimVolumes(o.Key)
				if err != nil {
					return nil, err
				}
				out[i] = claimRow{obj: o, vols: vols}
			}
			if snap.Index() == a.o.Store.Index() {
				seen.keep(keys) // as objectsKind
			}
			return out, nil
		},
		row: func(snap store.Snapshot, key string) (any, error) {
			o, err := snap.Object(model.KindPVC, key)
			if o == nil || err != nil {
				return nil, err
			}
			vols, err := snap.ClaimVolumes(key)
			if err != nil {
				return nil, err
			}
			return claimRow{obj: o, vols: vols}, nil
		},
		render: render,
		gone:   func(d *store.Deletion) item { return render(claimRow{obj: d.Last.(*model.Object)}) },
		joined: store.TableClaimVolumes,
		join:   join,
		split: func(row any) (any, any) {
			r := row.(claimRow)
			var vols any
			if r.vols != nil {
				vols = r.vols
			}
			return r.obj, vols
		},
	}
}
