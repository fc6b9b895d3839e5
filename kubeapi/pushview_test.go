package kubeapi

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

// TestPushScopeSeesOnlyItsNamespacesAndPodCount: a push token learns
// nothing of other sources from the node-wide kinds: the namespaces it
// lists (and watches, and gets) are default and those of its own source's
// objects, and the node counts its source's pods only. An admin sees all.
func TestPushScopeSeesOnlyItsNamespacesAndPodCount(t *testing.T) {
	f := newFixture(t, Options{NodeObject: func(_ context.Context, pods int) (v1.Node, bool) {
		return v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1", Annotations: map[string]string{"berth.io/pods": strconv.Itoa(pods)}}}, true
	}})
	for src, key := range map[string]string{"file": "cfg-only/conf", "push": "push-cm/conf"} {
		ns := key[:len(key)-len("/conf")]
		obj := &model.Object{Kind: model.KindConfigMap, Key: key, Source: src, Origin: "o", Ref: model.ObjectRef(model.KindConfigMap, key),
			ConfigMap: &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "conf", Namespace: ns}}}
		if err := f.st.ApplySource(src, func(store.View) (store.SourceWrite, error) {
			return store.SourceWrite{Objects: []*model.Object{obj}}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	// ApplySource sets a source's objects and pods: the pods come after.
	f.pod(t, "file", "team-a", "db", nil, v1.PodStatus{})
	f.pod(t, "file", "team-a", "web", nil, v1.PodStatus{})
	f.pod(t, "file", "default", "x", nil, v1.PodStatus{})
	f.pod(t, "push", "apps", "p1", nil, v1.PodStatus{})
	cfg := *f.cfg
	cfg.BearerToken = "push"
	push := newClientset(t, &cfg)
	ctx := context.Background()
	names := func(cs *kubernetes.Clientset) []string {
		t.Helper()
		l, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range l.Items {
			out = append(out, n.Name)
		}
		return out
	}
	if got, want := names(f.cs), []string{"apps", "cfg-only", "default", "push-cm", "team-a"}; !slices.Equal(got, want) {
		t.Errorf("admin namespaces %q, want %q", got, want)
	}
	if got, want := names(push), []string{"apps", "default", "push-cm"}; !slices.Equal(got, want) {
		t.Errorf("push namespaces %q, want %q", got, want)
	}
	for _, ns := range []string{"team-a", "cfg-only"} {
		if _, err := push.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("push get namespace %s: %v, want NotFound", ns, err)
		}
	}
	if rows := rowStrings(getTableAs(t, f, "/api/v1/namespaces", "push")); len(rows) != 3 {
		t.Errorf("push namespace table %q", rows)
	}
	podCount := func(cs *kubernetes.Clientset) string {
		t.Helper()
		n, err := cs.CoreV1().Nodes().Get(ctx, "node1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n.Annotations["berth.io/pods"]
	}
	if got := podCount(f.cs); got != "4" {
		t.Errorf("admin node pods %s, want 4", got)
	}
	if got := podCount(push); got != "1" {
		t.Errorf("push node pods %s, want 1", got)
	}
	if l, err := push.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 1 || l.Items[0].Annotations["berth.io/pods"] != "1" {
		t.Errorf("push node list %+v %v", l, err)
	}

	// A watch from the push list's version: another source's new namespace
	// never shows; the push source's does.
	l, err := push.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := push.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	f.pod(t, "file", "file-later", "q", nil, v1.PodStatus{})
	names(f.cs) // the admin view records file-later first
	f.pod(t, "push", "push-later", "p2", nil, v1.PodStatus{})
	if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*v1.Namespace).Name != "push-later" {
		t.Fatalf("push watch: %s %v, want ADDED push-later", ev.Type, ev.Object)
	}
	// Resumed from before both, the push view's history has only its own.
	w2, err := push.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	if ev := next(t, w2); ev.Type != watch.Added || ev.Object.(*v1.Namespace).Name != "push-later" {
		t.Fatalf("resumed push watch: %s %v, want ADDED push-later", ev.Type, ev.Object)
	}
}

// getTableAs GETs path as a Table with the bearer token.
func getTableAs(t *testing.T, f *fixture, path, token string) metav1.Table {
	t.Helper()
	req, _ := http.NewRequest("GET", f.srv.URL+path, nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tab metav1.Table
	if err := json.NewDecoder(resp.Body).Decode(&tab); err != nil || tab.Kind != "Table" {
		t.Fatalf("%s: %v %+v", path, err, tab)
	}
	return tab
}
