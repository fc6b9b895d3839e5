package store

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/model"
)

// A source's claim volume row: a binding recorded again is no write; the
// volume's end removes the row unless the source declares the claim
// (then it stays, empty, so the claim's version never goes back; another
// source's row goes), and the claim's removal takes the empty row with it.
func TestClaimVolumes(t *testing.T) {
	s, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	row := func() *ClaimVolume {
		t.Helper()
		v, err := s.Snapshot().ClaimVolume("file", "default/data")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	declare := func(declared bool) {
		t.Helper()
		var objs []*model.Object
		if declared {
			objs = []*model.Object{{Kind: model.KindPVC, Key: "default/data", Ref: model.ObjectRef(model.KindPVC, "default/data"), Source: "file",
				PVC: &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"}}}}
		}
		if err := s.ApplySource("file", func(View) (SourceWrite, error) { return SourceWrite{Objects: objs}, nil }); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetClaimVolume("file", "default/data", "vol"); err != nil {
		t.Fatal(err)
	}
	at := s.Index()
	if err := s.SetClaimVolume("file", "default/data", "vol"); err != nil || s.Index() != at || row().Volume != "vol" {
		t.Fatalf("bound again: index %d, was %d, %+v, %v", s.Index(), at, row(), err)
	}
	if err := s.SetClaimVolume("file", "default/data", ""); err != nil || row() != nil {
		t.Fatalf("an undeclared claim's last volume gone: %+v %v", row(), err)
	}
	declare(true)
	if err := s.SetClaimVolume("file", "default/data", "vol"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetClaimVolume("file", "default/data", ""); err != nil {
		t.Fatal(err)
	}
	if r := row(); r == nil || r.Volume != "" || r.ModifyIndex != s.Index() {
		t.Fatalf("a declared claim's last volume gone: %+v", r)
	}
	if err := s.SetClaimVolume("other", "default/data", "vol-other"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetClaimVolume("other", "default/data", ""); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Snapshot().ClaimVolume("other", "default/data"); r != nil || err != nil {
		t.Fatalf("another source's volume gone, its row kept for file's claim: %+v %v", r, err)
	}
	declare(false)
	if row() != nil {
		t.Fatalf("the empty row outlived its claim: %+v", row())
	}
}

// A claim removed by a partial write takes its empty volume row with it,
// as a full write's removal does.
func TestClaimVolumesPartialRemoval(t *testing.T) {
	s, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	claim := &model.Object{Kind: model.KindPVC, Key: "default/data", Ref: model.ObjectRef(model.KindPVC, "default/data"), Source: "file",
		PVC: &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"}}}
	write := func(w SourceWrite) {
		t.Helper()
		w.Partial = true
		if err := s.ApplySource("file", func(View) (SourceWrite, error) { return w, nil }); err != nil {
			t.Fatal(err)
		}
	}
	write(SourceWrite{Objects: []*model.Object{claim}})
	if err := s.SetClaimVolume("file", "default/data", "vol"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetClaimVolume("file", "default/data", ""); err != nil {
		t.Fatal(err)
	}
	write(SourceWrite{RemovedObjects: []*model.Object{claim}})
	all, err := s.Snapshot().AllClaimVolumes()
	if err != nil || len(all) != 0 {
		t.Fatalf("the empty row outlived its claim: %+v %v", all, err)
	}
}
