package store

import (
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/model"
	memdb "github.com/hashicorp/go-memdb"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNotifyAndWatch(t *testing.T) {
	var got []string
	s, err := New(func(k string) { got = append(got, k) })
	if err != nil {
		t.Fatal(err)
	}
	ws := memdb.NewWatchSet()
	if p, _ := s.Pod(ws, "default/a"); p != nil {
		t.Fatal("pod before insert")
	}
	if err := s.UpsertPod(&model.Pod{Key: "default/a", Source: "file", Spec: &v1.Pod{}}); err != nil {
		t.Fatal(err)
	}
	if ws.Watch(time.After(time.Second)) {
		t.Fatal("watch set did not fire on insert")
	}
	if len(got) != 1 || got[0] != "default/a" {
		t.Fatalf("notified %v", got)
	}

	got = nil
	_, _ = s.UpsertContainer(&model.Container{ID: "1", PodKey: "default/a"})
	_, _ = s.UpsertContainer(&model.Container{ID: "2", PodKey: "default/b"})
	if err := s.DeleteContainer("1", s.Seq()); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != "default/a" || got[1] != "default/b" || got[2] != "default/a" {
		t.Fatalf("container writes notified %v", got)
	}
	cs, _ := s.ContainersByPod(nil, "default/a")
	if len(cs) != 0 {
		t.Fatal("deleted container kept")
	}

	// Status writes do not notify (the controller writes them while
	// reconciling; a notification would loop).
	got = nil
	if ok, err := s.UpdatePod("default/a", func(p *model.Pod) bool { p.Status.Phase = v1.PodRunning; return true }); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if len(got) != 0 {
		t.Fatalf("status write notified %v", got)
	}
	p, _ := s.Pod(nil, "default/a")
	if p.Status.Phase != v1.PodRunning {
		t.Fatal("status not written")
	}
}

func TestReplaceSourcePods(t *testing.T) {
	s, _ := New(nil)
	a := &model.Pod{Key: "default/a", Source: "file", Spec: &v1.Pod{}}
	b := &model.Pod{Key: "default/b", Source: "file", Spec: &v1.Pod{}}
	h := &model.Pod{Key: "default/h", Source: "http", Spec: &v1.Pod{}}
	for _, p := range []*model.Pod{a, b, h} {
		_ = s.UpsertPod(p)
	}
	if err := s.ReplaceSourcePods("file", []*model.Pod{a}); err != nil {
		t.Fatal(err)
	}
	pods, _ := s.Pods(nil)
	if len(pods) != 2 || pods[0].Key != a.Key || pods[1].Key != h.Key {
		t.Fatalf("pods %v", pods)
	}
	if err := s.ReplaceSourcePods("file", []*model.Pod{h}); err == nil {
		t.Fatal("a source replaced another source's pod")
	}
}

func TestSourceSyncNotifiesContainerPods(t *testing.T) {
	var got []string
	s, _ := New(func(k string) { got = append(got, k) })
	_ = s.UpsertSource(&model.Source{Name: "file"})
	_, _ = s.UpsertContainer(&model.Container{ID: "1", PodKey: "default/orphan", Source: "file"})
	got = nil
	_ = s.UpsertSource(&model.Source{Name: "file", Synced: true})
	if len(got) != 1 || got[0] != "default/orphan" {
		t.Fatalf("notified %v", got)
	}
}

// TestHeldPods: a source holds the pods it declares and, once removed,
// those whose containers still run; a stopped container, another
// source's, and a pod declared and running count once.
func TestHeldPods(t *testing.T) {
	s, _ := New(nil)
	_ = s.UpsertPod(&model.Pod{Key: "default/a", Source: "push", Spec: &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "uid-a"}}})
	_ = s.UpsertPod(&model.Pod{Key: "default/f", Source: "file", Spec: &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "uid-f"}}})
	for _, c := range []*model.Container{
		{ID: "1", PodKey: "default/a", PodUID: "uid-a", Source: "push", State: model.StateRunning},
		{ID: "2", PodKey: "default/gone", PodUID: "uid-gone", Source: "push", State: model.StateRunning},
		{ID: "3", PodKey: "default/gone", PodUID: "uid-gone", Source: "push", State: model.StateExited},
		{ID: "4", PodKey: "default/old", PodUID: "uid-old", Source: "push", State: model.StateExited},
		{ID: "5", PodKey: "default/f", PodUID: "uid-f2", Source: "file", State: model.StateRunning},
	} {
		if _, err := s.UpsertContainer(c); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.HeldPods("push")
	if err != nil || strings.Join(got, " ") != "uid-a uid-gone" {
		t.Fatalf("HeldPods(push) = %v, %v; want uid-a uid-gone", got, err)
	}
	if got, _ := s.HeldPods("http"); len(got) != 0 {
		t.Fatalf("HeldPods(http) = %v", got)
	}
}

// The informer syncs a source through ApplySource: that sync, like
// UpsertSource's, notifies every pod key with containers, so orphans of the
// source are collected at once rather than at the next resync.
func TestApplySourceSyncNotifiesContainerPods(t *testing.T) {
	var got []string
	s, _ := New(func(k string) { got = append(got, k) })
	_ = s.UpsertSource(&model.Source{Name: "file"})
	_, _ = s.UpsertContainer(&model.Container{ID: "1", PodKey: "default/orphan", Source: "file"})
	apply := func() {
		t.Helper()
		got = nil
		err := s.ApplySource("file", func(View) (SourceWrite, error) {
			return SourceWrite{Source: &model.Source{Name: "file", Synced: true}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	apply()
	if len(got) != 1 || got[0] != "default/orphan" {
		t.Fatalf("first sync notified %v, want the orphan's key", got)
	}
	apply()
	if len(got) != 0 {
		t.Fatalf("a later update of a synced source notified %v", got)
	}
}
