package kubeapi

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/berth-dev/berth/model"
)

// A watch resumed from a list's resourceVersion under a field selector
// (an informer's) is sent DELETED when an object of the list leaves the
// selection (a pod that ends is no longer Running), and nothing of an
// object that never matched: the store knows each object as it was at
// the watch's version.
func TestResumedSelectorWatchSeesObjectsLeave(t *testing.T) {
	f := newFixture(t, Options{})
	f.pod(t, "file", "default", "web", nil, running("10.0.0.2"))
	f.pod(t, "file", "default", "db", nil, running("10.0.0.3"))
	f.pod(t, "file", "default", "idle", nil, v1.PodStatus{Phase: v1.PodPending})
	ctx := context.Background()
	pods := f.cs.CoreV1().Pods("default")
	sel := metav1.ListOptions{FieldSelector: "status.phase=Running"}
	l, err := pods.List(ctx, sel)
	if err != nil || len(l.Items) != 2 {
		t.Fatalf("list: %v %v", l, err)
	}
	sel.ResourceVersion = l.ResourceVersion
	w, err := pods.Watch(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// A pod that never matched changes, then goes: the watch sends
	// nothing of it.
	if _, err := f.st.UpdatePod("default/idle", func(p *model.Pod) bool {
		p.Status.Message = "still pending"
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.st.DeletePod("default/idle"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.UpdatePod("default/web", func(p *model.Pod) bool {
		p.Status = v1.PodStatus{Phase: v1.PodSucceeded}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != watch.Deleted || ev.Object.(*v1.Pod).Name != "web" {
		t.Fatalf("want DELETED web, got %s %v", ev.Type, ev.Object)
	}
	if _, err := f.st.UpdatePod("default/db", func(p *model.Pod) bool {
		p.Status.Message = "still running"
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != watch.Modified || ev.Object.(*v1.Pod).Name != "db" {
		t.Fatalf("want MODIFIED db, got %s %v", ev.Type, ev.Object)
	}
}
