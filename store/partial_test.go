package store

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/resourcehelper"
)

func sourcePod(source, name, uid string) *model.Pod {
	return &model.Pod{Key: "default/" + name, Source: source, Origin: name,
		Spec: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + uid)}}}
}

// A partial write touches only the pods it names: the source's other pods
// stay the same objects and are not notified, a changed pod of the same
// UID keeps its observed status, a removed key goes, and another source's
// pod is neither deleted nor overwritten.
func TestApplySourcePartial(t *testing.T) {
	var notified []string
	s, err := New(func(k string) { notified = append(notified, k) })
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := sourcePod("etcd", "a", "a"), sourcePod("etcd", "b", "b"), sourcePod("etcd", "c", "c")
	other := sourcePod("file", "x", "x")
	if err := s.ReplaceSourcePods("etcd", []*model.Pod{a, b, c}); err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceSourcePods("file", []*model.Pod{other}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdatePod("default/b", func(p *model.Pod) bool { p.Status.Phase = v1.PodRunning; return true }); err != nil {
		t.Fatal(err)
	}
	notified = nil
	aBefore, _ := s.Pod(nil, "default/a")
	otherBefore, _ := s.Pod(nil, "default/x")
	b2 := sourcePod("etcd", "b", "b")
	b2.Spec.Labels = map[string]string{"v": "2"}
	d := sourcePod("etcd", "d", "d")
	write := func(w SourceWrite) error {
		return s.ApplySource("etcd", func(View) (SourceWrite, error) { return w, nil })
	}
	if err := write(SourceWrite{Partial: true, Pods: []*model.Pod{b2, d}, Removed: []string{"default/c", "default/x"}}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(notified)
	if want := []string{"default/b", "default/c", "default/d"}; !slices.Equal(notified, want) {
		t.Errorf("notified %v, want %v", notified, want)
	}
	got := func(k string) *model.Pod { p, _ := s.Pod(nil, k); return p }
	if got("default/a") != aBefore || aBefore.Spec != a.Spec {
		t.Error("pod a, not in the write, is another object")
	}
	if p := got("default/b"); p == nil || p.Spec != b2.Spec || p.Status.Phase != v1.PodRunning {
		t.Errorf("changed pod b: %+v, want the new spec with its status kept", p)
	}
	if got("default/c") != nil || got("default/d") == nil {
		t.Error("c not removed or d not added")
	}
	if got("default/x") != otherBefore || otherBefore.Spec != other.Spec {
		t.Error("another source's pod removed by a partial write")
	}
	if err := write(SourceWrite{Partial: true, Pods: []*model.Pod{sourcePod("etcd", "x", "y")}}); err == nil || !strings.Contains(err.Error(), `"file"`) {
		t.Errorf("overwriting another source's pod: err %v", err)
	}
}

func TestViewPodAndRequests(t *testing.T) {
	s, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := sourcePod("etcd", "a", "a"), sourcePod("etcd", "b", "b")
	for p, mem := range map[*model.Pod]string{a: "1Mi", b: "2Mi"} {
		p.Spec.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceMemory: resource.MustParse(mem)}}}}
	}
	if err := s.ReplaceSourcePods("etcd", []*model.Pod{a, b}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdatePod("default/b", func(p *model.Pod) bool { p.Terminal = v1.PodSucceeded; return true }); err != nil {
		t.Fatal(err)
	}
	err = s.ApplySource("etcd", func(v View) (SourceWrite, error) {
		if p, err := v.Pod("default/a"); err != nil || p == nil || p.Key != "default/a" {
			t.Errorf("Pod(default/a) = %v, %v", p, err)
		}
		if p, err := v.Pod("default/zz"); err != nil || p != nil {
			t.Errorf("Pod of a missing key = %v, %v", p, err)
		}
		if r := v.Requests(); r != (resourcehelper.Requests{Memory: 1 << 20}) {
			t.Errorf("Requests = %+v, want a's only: b ended", r)
		}
		return SourceWrite{Partial: true}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
