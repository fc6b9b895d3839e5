package claims

import (
	"context"
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/runtime/fake"
	"github.com/berth-dev/berth/store"
)

func claimPod(name, claim string) *model.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	p.Spec.Volumes = []v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
	return &model.Pod{Key: "default/" + name, Source: "file", Spec: p}
}

// TestListAndDelete: a declared claim is Pending until the store records
// its volume (Seed, at start, or the controller as it makes it), then Bound with its request as capacity and its users; a volume made
// without a declaration is listed too; deletion is refused while a pod
// uses the claim and answers not-found without a volume.
func TestListAndDelete(t *testing.T) {
	ctx := context.Background()
	st, err := store.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	rt := fake.New(func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) })
	pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"}}
	pvc.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	pvc.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse("2Gi")}
	err = st.ApplySource("file", func(store.View) (store.SourceWrite, error) {
		return store.SourceWrite{Pods: []*model.Pod{claimPod("db", "data")}, Objects: []*model.Object{{Kind: model.KindPVC, Key: "default/data",
			Ref: model.ObjectRef(model.KindPVC, "default/data"), Source: "file", PVC: pvc}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := New(st, rt, "n1")
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 || list[0].Status.Phase != v1.ClaimPending {
		t.Fatalf("before its volume: %+v %v", list, err)
	}
	for _, name := range []string{"data", "scratch"} {
		if err := rt.CreateVolume(ctx, runtime.VolumeConfig{Name: runtime.ClaimVolumeName("file", "default", name, "n1"), Persistent: true,
			Labels: runtime.ClaimVolumeLabels("default", name, "n1", "file")}); err != nil {
			t.Fatal(err)
		}
	}
	if list, err = s.List(ctx); err != nil || len(list) != 1 || list[0].Status.Phase != v1.ClaimPending {
		t.Fatalf("volumes the store has not recorded: %+v %v", list, err)
	}
	if err := s.Seed(ctx); err != nil { // as at start
		t.Fatal(err)
	}
	list, err = s.List(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("list %+v %v", list, err)
	}
	data, scratch := list[0], list[1]
	if data.Status.Phase != v1.ClaimBound || data.Status.Capacity.Storage().String() != "2Gi" || data.Annotations[AnnotationUsedBy] != "default/db" ||
		data.Spec.VolumeName != runtime.ClaimVolumeName("file", "default", "data", "n1") {
		t.Errorf("declared claim %+v", data)
	}
	if scratch.Name != "scratch" || scratch.Status.Phase != v1.ClaimBound || scratch.Annotations[AnnotationSource] != "file" {
		t.Errorf("undeclared claim %+v", scratch)
	}
	if err := s.Delete(ctx, "default", "data"); !errors.Is(err, ErrInUse) {
		t.Fatalf("delete of a used claim: %v", err)
	}
	if err := s.Delete(ctx, "default", "scratch"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if err := s.Delete(ctx, "default", "scratch"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if list, err = s.List(ctx); err != nil || len(list) != 1 || list[0].Name != "data" {
		t.Fatalf("after the delete: %+v %v", list, err)
	}
	if vols := rt.Volumes(); len(vols) != 1 {
		t.Fatalf("volumes left %v", vols)
	}
}

// racingEngine is an engine on which, as each volume is removed, a pod
// admitted meanwhile makes it again and the controller records it (as
// EnsureClaims and bindClaims do).
type racingEngine struct {
	*fake.Runtime
	st *store.Store
}

func (e racingEngine) RemoveVolume(ctx context.Context, name string) error {
	vols, err := e.ListVolumes(ctx, map[string]string{})
	if err != nil {
		return err
	}
	if err := e.Runtime.RemoveVolume(ctx, name); err != nil {
		return err
	}
	for _, v := range vols {
		if v.Name == name {
			if err := e.CreateVolume(ctx, runtime.VolumeConfig{Name: name, Persistent: true, Labels: v.Labels}); err != nil {
				return err
			}
			return e.st.SetClaimVolume(v.Labels[runtime.LabelSource], v.Labels[runtime.LabelClaimNamespace]+"/"+v.Labels[runtime.LabelClaimName], name)
		}
	}
	return nil
}

// A volume made again while Delete removes it (a pod admitted meanwhile)
// leaves the claim Bound to it: never Pending while a pod runs on it.
func TestDeleteRacingANewPod(t *testing.T) {
	ctx := context.Background()
	st, err := store.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	rt := fake.New(func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) })
	name := runtime.ClaimVolumeName("file", "default", "data", "n1")
	if err := rt.CreateVolume(ctx, runtime.VolumeConfig{Name: name, Persistent: true,
		Labels: runtime.ClaimVolumeLabels("default", "data", "n1", "file")}); err != nil {
		t.Fatal(err)
	}
	s := New(st, racingEngine{rt, st}, "n1")
	if err := s.Seed(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "default", "data"); err != nil {
		t.Fatal(err)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 || list[0].Status.Phase != v1.ClaimBound || list[0].Spec.VolumeName != name {
		t.Fatalf("want the claim Bound to the volume made again: %+v %v", list, err)
	}
}
