package kubeapi

import (
	"context"
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

// declareClaim stores claim default/data of source file with labels.
func declareClaim(t *testing.T, f *fixture, labels map[string]string) {
	t.Helper()
	pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default", Labels: labels},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}}}
	objs := []*model.Object{{Kind: model.KindPVC, Key: "default/data", Source: "file", Origin: "a.yaml",
		Ref: model.ObjectRef(model.KindPVC, "default/data"), PVC: pvc}}
	if labels == nil {
		objs = nil
	}
	if err := f.st.ApplySource("file", func(store.View) (store.SourceWrite, error) {
		return store.SourceWrite{Objects: objs}, nil
	}); err != nil {
		t.Fatal(err)
	}
}

func rv(t *testing.T, o metav1.Object) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(o.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A claim is served Pending until the store records its source's volume,
// then Bound to it with its request as capacity; the binding and its end
// are MODIFIED events at newer versions, another source's volume at the
// key binds nothing, and a watch resuming from before several changes of
// either part sees the claim once, as it now is.
func TestClaimBindingIsAChange(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	pvcs := f.cs.CoreV1().PersistentVolumeClaims("default")
	declareClaim(t, f, map[string]string{"v": "1"})
	c, err := pvcs.Get(ctx, "data", metav1.GetOptions{})
	if err != nil || c.Status.Phase != v1.ClaimPending || c.Spec.VolumeName != "" || c.Status.Capacity != nil {
		t.Fatalf("before its volume: %+v %v", c, err)
	}
	start := c.ResourceVersion
	w, err := pvcs.Watch(ctx, metav1.ListOptions{ResourceVersion: start})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := f.st.SetClaimVolume("other", "default/data", "vol-other"); err != nil {
		t.Fatal(err)
	}
	if err := f.st.SetClaimVolume("file", "default/data", "vol1"); err != nil {
		t.Fatal(err)
	}
	first := next(t, w)
	bound := first.Object.(*v1.PersistentVolumeClaim)
	if first.Type != watch.Modified || bound.Status.Phase != v1.ClaimBound {
		t.Fatalf("want MODIFIED Bound, got %s %v", first.Type, first.Object)
	}
	if bound.Spec.VolumeName != "vol1" || bound.Status.Capacity.Storage().String() != "1Gi" ||
		len(bound.Status.AccessModes) != 1 || bound.Status.AccessModes[0] != v1.ReadWriteOnce || rv(t, bound) <= rv(t, c) {
		t.Fatalf("bound claim %+v", bound)
	}
	if again, err := pvcs.Get(ctx, "data", metav1.GetOptions{}); err != nil || again.ResourceVersion != bound.ResourceVersion {
		t.Fatalf("get after the binding: %v %v", again, err)
	}
	if err := f.st.SetClaimVolume("file", "default/data", "vol1"); err != nil || f.st.Index() != rv(t, bound) {
		t.Fatalf("a binding recorded again is a write: %v", err)
	}
	if err := f.st.SetClaimVolume("file", "default/data", ""); err != nil {
		t.Fatal(err)
	}
	ev := next(t, w)
	unbound := ev.Object.(*v1.PersistentVolumeClaim)
	if ev.Type != watch.Modified || unbound.Status.Phase != v1.ClaimPending || unbound.Spec.VolumeName != "" || rv(t, unbound) <= rv(t, bound) {
		t.Fatalf("want MODIFIED Pending at a newer version, got %s %+v", ev.Type, unbound)
	}

	// From the start: one change of the claim, as it now is.
	if err := f.st.SetClaimVolume("file", "default/data", "vol2"); err != nil {
		t.Fatal(err)
	}
	declareClaim(t, f, map[string]string{"v": "2"})
	resumed, err := pvcs.Watch(ctx, metav1.ListOptions{ResourceVersion: start})
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Stop()
	ev = next(t, resumed)
	now := ev.Object.(*v1.PersistentVolumeClaim)
	if ev.Type != watch.Modified || now.Spec.VolumeName != "vol2" || now.Labels["v"] != "2" || now.ResourceVersion != strconv.FormatUint(f.st.Index(), 10) {
		t.Fatalf("resumed: %s %+v", ev.Type, now)
	}
	declareClaim(t, f, nil)
	if ev := next(t, resumed); ev.Type != watch.Deleted {
		t.Fatalf("want DELETED, got %s %v", ev.Type, ev.Object)
	}
	noFurther(t, resumed)
}

// A watch resuming, with a selector, from before a claim was deleted and
// declared again sees the deletion, then the new claim ADDED: never the
// new claim as a change of the old one, nor the old one deleted twice.
func TestClaimResumedAcrossDeleteAndCreate(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	pvcs := f.cs.CoreV1().PersistentVolumeClaims("default")
	c := boundClaim(t, f)
	declareClaim(t, f, nil)
	declareClaim(t, f, map[string]string{"v": "2"})
	w, err := pvcs.Watch(ctx, metav1.ListOptions{ResourceVersion: c.ResourceVersion, LabelSelector: "v"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var got []string
	for range 2 {
		ev := next(t, w)
		got = append(got, string(ev.Type)+" "+ev.Object.(*v1.PersistentVolumeClaim).Labels["v"])
	}
	if got[0] != "DELETED 1" || got[1] != "ADDED 2" {
		t.Fatalf("want DELETED 1, ADDED 2, got %v", got)
	}
	noFurther(t, w)
}

// Another source's volume at a claim's key is none of the claim's: it
// changes neither its resourceVersion nor sends its watchers an event.
func TestClaimIgnoresOtherSourcesVolume(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	pvcs := f.cs.CoreV1().PersistentVolumeClaims("default")
	declareClaim(t, f, map[string]string{"v": "1"})
	c, err := pvcs.Get(ctx, "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := pvcs.Watch(ctx, metav1.ListOptions{ResourceVersion: c.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := f.st.SetClaimVolume("other", "default/data", "vol-other"); err != nil {
		t.Fatal(err)
	}
	if again, err := pvcs.Get(ctx, "data", metav1.GetOptions{}); err != nil || again.ResourceVersion != c.ResourceVersion {
		t.Fatalf("another source's volume changed the claim: %v, was %s: %v", again, c.ResourceVersion, err)
	}
	if err := f.st.SetClaimVolume("other", "default/data", ""); err != nil {
		t.Fatal(err)
	}
	if err := f.st.SetClaimVolume("file", "default/data", "vol1"); err != nil {
		t.Fatal(err)
	}
	ev := next(t, w)
	if got := ev.Object.(*v1.PersistentVolumeClaim); ev.Type != watch.Modified || got.Spec.VolumeName != "vol1" {
		t.Fatalf("want the claim's own binding first, got %s %+v", ev.Type, got)
	}
	// A resumed watch sees the same.
	resumed, err := pvcs.Watch(ctx, metav1.ListOptions{ResourceVersion: c.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Stop()
	ev = next(t, resumed)
	if got := ev.Object.(*v1.PersistentVolumeClaim); ev.Type != watch.Modified || got.Spec.VolumeName != "vol1" {
		t.Fatalf("resumed: want the claim's own binding, got %s %+v", ev.Type, got)
	}
	noFurther(t, resumed)
}

// A bound claim's deletion carries the binding it had: DELETED Bound, with
// its volume.
func TestClaimDeletedBound(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	pvcs := f.cs.CoreV1().PersistentVolumeClaims("default")
	c := boundClaim(t, f)
	w, err := pvcs.Watch(ctx, metav1.ListOptions{ResourceVersion: c.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { w.Stop() }()
	declareClaim(t, f, nil)
	// The volume going after the claim changes nothing of its deletion.
	if err := f.st.SetClaimVolume("file", "default/data", ""); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"live", "resumed"} {
		if name == "resumed" {
			w.Stop()
			if w, err = pvcs.Watch(ctx, metav1.ListOptions{ResourceVersion: c.ResourceVersion}); err != nil {
				t.Fatal(err)
			}
		}
		ev := next(t, w)
		got := ev.Object.(*v1.PersistentVolumeClaim)
		if ev.Type != watch.Deleted || got.Status.Phase != v1.ClaimBound || got.Spec.VolumeName != "vol1" {
			t.Fatalf("%s: want DELETED Bound to vol1, got %s %s %q", name, ev.Type, got.Status.Phase, got.Spec.VolumeName)
		}
	}
}

// A claim as served (spec.volumeName its own volume's) is written back as
// it reads: create and replace take it, persisting no volumeName; any
// other volumeName is refused as before.
func TestClaimWrittenBackAsServed(t *testing.T) {
	f := newWriteFixture(t)
	ctx := context.Background()
	pvcs := f.cs.CoreV1().PersistentVolumeClaims("default")
	served := "berth-pvc_push_default_data_node1"
	c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, VolumeName: served,
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}}}
	if _, err := pvcs.Create(ctx, c, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create as exported: %v", err)
	}
	if err := f.st.SetClaimVolume("push", "default/data", served); err != nil {
		t.Fatal(err)
	}
	got, err := pvcs.Get(ctx, "data", metav1.GetOptions{})
	if err != nil || got.Spec.VolumeName != served {
		t.Fatalf("served: %+v %v", got, err)
	}
	got.Labels = map[string]string{"tier": "db"}
	if _, err := pvcs.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("replace as served: %v", err)
	}
	m, err := f.push.Manifest(model.KindPVC, "default", "data")
	if err != nil || strings.Contains(string(m), "volumeName") || !strings.Contains(string(m), "tier: db") {
		t.Fatalf("persisted: %s %v", m, err)
	}
	got, err = pvcs.Get(ctx, "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Spec.VolumeName = "pv-elsewhere"
	if _, err := pvcs.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.volumeName") {
		t.Fatalf("another volumeName: want 422 naming spec.volumeName, got %v", err)
	}
}

// noFurther fails t if w has an event ready.
func noFurther(t *testing.T, w watch.Interface) {
	t.Helper()
	select {
	case ev := <-w.ResultChan():
		t.Fatalf("a further event: %s %v", ev.Type, ev.Object)
	default:
	}
}

// boundClaim declares claim default/data (label v=1) of the file source,
// records its volume vol1, and returns it as served.
func boundClaim(t *testing.T, f *fixture) *v1.PersistentVolumeClaim {
	t.Helper()
	declareClaim(t, f, map[string]string{"v": "1"})
	if err := f.st.SetClaimVolume("file", "default/data", "vol1"); err != nil {
		t.Fatal(err)
	}
	c, err := f.cs.CoreV1().PersistentVolumeClaims("default").Get(context.Background(), "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
