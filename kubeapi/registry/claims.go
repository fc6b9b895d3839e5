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

// claimRow is a claim joined with its source's volume row (vol nil:
// none yet). A value, so that equal parts are the same row to the cache.
type claimRow struct {
	obj *model.Object
	vol *store.ClaimVolume
}

// Current is the claim's version: created with its object, modified by the
// newer write of its parts.
func (r claimRow) Current() model.Version {
	v := r.obj.Current()
	if r.vol != nil {
		v.ModifyIndex = max(v.ModifyIndex, r.vol.ModifyIndex)
	}
	return v
}

// volume is the engine volume of the claim, "" when none.
func (r claimRow) volume() string {
	if r.vol == nil {
		return ""
	}
	return r.vol.Volume
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
// joined with its source's volume row (store.ClaimVolume), Bound once
// that volume exists, a binding being a change of the claim; another
// source's volume at the same namespace/name is none of the claim's.
func (a *kinds) claimsKind(seen *firstSeen) *storeKind {
	render := func(row any) item {
		r := row.(claimRow)
		c := r.obj.PVC.DeepCopy()
		c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}
		a.objectMeta(&c.ObjectMeta, r.obj, seen)
		podview.ClaimStatus(c, r.volume())
		return item{Key: r.obj.Key, Obj: c, Source: r.obj.Source}
	}
	part := func(snap store.Snapshot, obj any, index uint64) (any, error) {
		o := obj.(*model.Object)
		vol, err := snap.ClaimVolumeAt(o.Source, o.Key, index)
		if vol == nil || err != nil {
			return nil, err
		}
		return vol, nil
	}
	join := func(obj, part any) any {
		vol, _ := part.(*store.ClaimVolume)
		return claimRow{obj: obj.(*model.Object), vol: vol}
	}
	return &storeKind{
		tables: []string{store.ObjectTable(model.KindPVC), store.TableClaimVolumes},
		rows: func(snap store.Snapshot, ws memdb.WatchSet) ([]any, error) {
			return a.objectRows(snap, ws, model.KindPVC, seen, func(o *model.Object) (any, error) {
				vol, err := snap.ClaimVolume(o.Source, o.Key)
				return claimRow{obj: o, vol: vol}, err
			})
		},
		row: func(snap store.Snapshot, key string) (any, error) {
			o, err := snap.Object(model.KindPVC, key)
			if o == nil || err != nil {
				return nil, err
			}
			vol, err := snap.ClaimVolume(o.Source, key)
			if err != nil {
				return nil, err
			}
			return claimRow{obj: o, vol: vol}, nil
		},
		render: render,
		joined: store.TableClaimVolumes,
		owner: func(c store.Change) string {
			row := c.Row
			if c.Deleted != nil {
				row = c.Deleted.Last
			}
			return row.(*store.ClaimVolume).Claim
		},
		part:   part,
		join:   join,
		object: func(row any) any { return row.(claimRow).obj },
	}
}
