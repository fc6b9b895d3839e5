package kubeapi

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

// secretMark is what the trusted source's objects hold and no push-scoped
// answer may carry.
const secretMark = "hunter2-trusted"

// setObjects makes cms (name → value of key "k") source's ConfigMaps.
func (f *fixture) setObjects(t *testing.T, source string, cms map[string]string) {
	t.Helper()
	var objs []*model.Object
	for name, v := range cms {
		key := "default/" + name
		objs = append(objs, &model.Object{Kind: model.KindConfigMap, Key: key, Source: source, Origin: source + ".yaml",
			Ref:       model.ObjectRef(model.KindConfigMap, key),
			ConfigMap: &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: map[string]string{"k": v}}})
	}
	if err := f.st.ApplySource(source, func(store.View) (store.SourceWrite, error) {
		return store.SourceWrite{Objects: objs}, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// secretPod stores source's pod default/name whose container's env holds
// value, with a UID of its own.
func (f *fixture) secretPod(t *testing.T, source, name, value string) *model.Pod {
	t.Helper()
	p := &model.Pod{Key: "default/" + name, Source: source, Origin: source + ".yaml", SeenAt: t0,
		Spec: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(source + "-" + name)},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "img", Env: []v1.EnvVar{{Name: "SECRET", Value: value}}}}}}}
	if err := f.st.UpsertPod(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// drain reads events of ch until one whose object names until, failing on
// any that carries secretMark; it returns the events before until that
// name x.
func drain(t *testing.T, ch <-chan map[string]json.RawMessage, until string) []string {
	t.Helper()
	var got []string
	for {
		typ, obj := nextRaw(t, ch)
		if typ == "" {
			t.Fatalf("watch ended before %s; got %q", until, got)
		}
		if strings.Contains(string(obj), secretMark) {
			t.Fatalf("a push-scoped watch got the trusted source's object: %s %s", typ, obj)
		}
		if strings.Contains(string(obj), `"name":"`+until+`"`) {
			return got
		}
		if strings.Contains(string(obj), `"name":"x"`) {
			got = append(got, typ+" "+string(obj))
		}
	}
}

// TestResumedWatchKeepsTheSourceBoundary is the attack: a push client
// takes a name, lists, deletes its object, and the trusted source then
// declares the same name; with no request in between, a watch resumed
// from the earlier list's version must report only the push object's
// deletion, with the last state the push client could see, and never the
// trusted object, as JSON or as a Table.
func TestResumedWatchKeepsTheSourceBoundary(t *testing.T) {
	f := newFixture(t, Options{})
	f.setObjects(t, "push", map[string]string{"x": "mine"})
	f.secretPod(t, "push", "x", "mine")
	cfg := *f.cfg
	cfg.BearerToken = "push"
	push := newClientset(t, &cfg)
	ctx := context.Background()
	cms, err := push.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(cms.Items) != 1 {
		t.Fatalf("push list of configmaps: %v %v", cms, err)
	}
	pods, err := push.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("push list of pods: %v %v", pods, err)
	}

	// The push objects go and the trusted source's take their names; no
	// request syncs the API in between.
	f.setObjects(t, "push", nil)
	f.setObjects(t, "file", map[string]string{"x": secretMark})
	if err := f.st.DeletePod("default/x"); err != nil {
		t.Fatal(err)
	}
	f.secretPod(t, "file", "x", secretMark)

	for _, tc := range []struct{ kind, path, from, accept string }{
		{"ConfigMap", "/api/v1/namespaces/default/configmaps", cms.ResourceVersion, ""},
		{"Pod", "/api/v1/namespaces/default/pods", pods.ResourceVersion, ""},
		{"ConfigMap Table", "/api/v1/namespaces/default/configmaps", cms.ResourceVersion, tableAccept},
		{"Pod Table", "/api/v1/namespaces/default/pods", pods.ResourceVersion, tableAccept},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			ch, _ := rawWatchAs(t, f, tc.path+"?watch=true&includeObject=Object&resourceVersion="+tc.from, tc.accept, "push")
			typ, obj := nextRaw(t, ch)
			if strings.Contains(string(obj), secretMark) {
				t.Fatalf("the resumed watch leaked the trusted object: %s %s", typ, obj)
			}
			if typ != WatchDeleted || !strings.Contains(string(obj), "mine") {
				t.Fatalf("want DELETED x as the push client last saw it, got %s %s", typ, obj)
			}
			var m struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			_ = json.Unmarshal(obj, &m)
			rv, _ := strconv.ParseUint(m.Metadata.ResourceVersion, 10, 64)
			from, _ := strconv.ParseUint(tc.from, 10, 64)
			if tc.accept == "" && (rv <= from || m.Metadata.Annotations[SourceAnnotation] != "push") {
				t.Fatalf("DELETED x: want the push object at the deletion's version (after %s), got %+v", tc.from, m.Metadata)
			}
			// Up to the push client's own next object, nothing more of x
			// (the earlier subtests' objects come and go).
			name := "y" + strings.ReplaceAll(strings.ToLower(tc.kind), " ", "")
			if strings.HasPrefix(tc.kind, "Pod") {
				f.secretPod(t, "push", name, "mine")
			} else {
				f.setObjects(t, "push", map[string]string{name: "mine"})
			}
			if got := drain(t, ch, name); len(got) != 0 {
				t.Fatalf("events of x between DELETED x and ADDED %s: %q", name, got)
			}
		})
	}

	// An unscoped watcher sees two objects: the push one deleted, then the
	// trusted one added (another UID), never one MODIFIED into the other.
	ch, _ := rawWatch(t, f, "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion="+cms.ResourceVersion, "")
	if typ, obj := nextRaw(t, ch); typ != WatchDeleted || !strings.Contains(string(obj), `"berth.io/source":"push"`) {
		t.Fatalf("admin: want DELETED of the push x, got %s %s", typ, obj)
	}
	if typ, obj := nextRaw(t, ch); typ != WatchAdded || !strings.Contains(string(obj), secretMark) {
		t.Fatalf("admin: want ADDED of the trusted x, got %s %s", typ, obj)
	}
	if _, err := push.CoreV1().ConfigMaps("default").Get(ctx, "x", metav1.GetOptions{}); err == nil {
		t.Fatal("the push token reads the trusted ConfigMap x")
	}
}

// TestLiveWatchKeepsTheSourceBoundary: while a deleted push pod's
// container stops, the trusted source declares the same name; the push
// client's open watch gets the push pod's deletion, never the trusted pod.
func TestLiveWatchKeepsTheSourceBoundary(t *testing.T) {
	f := newFixture(t, Options{})
	p := f.secretPod(t, "push", "x", "mine")
	if _, err := f.st.UpsertContainer(&model.Container{ID: "c1", PodKey: p.Key, PodUID: string(p.Spec.UID),
		Name: "app", State: model.StateRunning, Seq: f.st.Seq()}); err != nil {
		t.Fatal(err)
	}
	ch, _ := rawWatchAs(t, f, "/api/v1/namespaces/default/pods?watch=true", "", "push")
	if typ, obj := nextRaw(t, ch); typ != WatchAdded || !strings.Contains(string(obj), "mine") {
		t.Fatalf("want ADDED x, got %s %s", typ, obj)
	}
	if err := f.st.DeletePod("default/x"); err != nil {
		t.Fatal(err)
	}
	if typ, obj := nextRaw(t, ch); typ != WatchModified || !strings.Contains(string(obj), "deletionTimestamp") {
		t.Fatalf("want MODIFIED x terminating, got %s %s", typ, obj)
	}
	f.secretPod(t, "file", "x", secretMark)
	typ, obj := nextRaw(t, ch)
	if strings.Contains(string(obj), secretMark) {
		t.Fatalf("the push watch got the trusted pod: %s %s", typ, obj)
	}
	if typ != WatchDeleted || !strings.Contains(string(obj), "mine") {
		t.Fatalf("want DELETED of the push x, got %s %s", typ, obj)
	}
	f.secretPod(t, "push", "y", "mine")
	if got := drain(t, ch, "y"); len(got) != 0 {
		t.Fatalf("events of x between DELETED x and ADDED y: %q", got)
	}
}
