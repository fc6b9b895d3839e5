package store

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/model"
)

// A claim's volumes row: a binding recorded again is no write; the last
// volume's end removes the row unless a claim is declared at its key
// (then it stays, empty, so the claim's version never goes back), and the
// claim's removal takes the empty row with it.
func TestClaimVolumes(t *testing.T) {
	s, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	row := func() *ClaimVolumes {
		t.Helper()
		v, err := s.Snapshot().ClaimVolumes("default/data")
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
	if err := s.SetClaimVolume("file", "default/data", "vol"); err != nil || s.Index() != at || row().Volumes["file"] != "vol" {
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
	if r := row(); r == nil || len(r.Volumes) != 0 || r.ModifyIndex != s.Index() {
		t.Fatalf("a declared claim's last volume gone: %+v", r)
	}
	declare(false)
	if row() != nil {
		t.Fatalf("the empty row outlived its claim: %+v", row())
	}
}
