package kubeapi

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/kubeapi/printers"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/berth-dev/berth/model"
)

// next returns the watch's next event, failing after 10 s.
func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event")
	}
	return watch.Event{}
}

func TestWatchPodsFromResourceVersion(t *testing.T) {
	f := newFixture(t, Options{})
	f.pod(t, "file", "default", "web", map[string]string{"app": "web"}, v1.PodStatus{})
	ctx := context.Background()
	pods := f.cs.CoreV1().Pods("default")
	l, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	sel, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion, LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	defer sel.Stop()

	f.pod(t, "file", "default", "db", map[string]string{"app": "db"}, v1.PodStatus{})
	if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*v1.Pod).Name != "db" {
		t.Fatalf("want ADDED db, got %s %v", ev.Type, ev.Object)
	}
	if _, err := f.st.UpdatePod("default/web", func(p *model.Pod) bool { p.Status = running("10.0.0.9"); return true }); err != nil {
		t.Fatal(err)
	}
	// UpdatePod does not notify, but the table's channel fires.
	ev := next(t, w)
	if ev.Type != watch.Modified || ev.Object.(*v1.Pod).Status.PodIP != "10.0.0.9" {
		t.Fatalf("want MODIFIED web, got %s %v", ev.Type, ev.Object)
	}
	rv := ev.Object.(*v1.Pod).ResourceVersion
	if ev := next(t, sel); ev.Type != watch.Modified || ev.Object.(*v1.Pod).Name != "web" {
		t.Fatalf("selected watch: want MODIFIED web, got %s %v", ev.Type, ev.Object)
	}
	// The label changes: web leaves the selection.
	p, _ := f.st.Pod(nil, "default/web")
	cp := *p
	cp.Spec = p.Spec.DeepCopy()
	cp.Spec.Labels = map[string]string{"app": "other"}
	if err := f.st.UpsertPod(&cp); err != nil {
		t.Fatal(err)
	}
	// As the apiserver's watch cache: the last state that matched, at the
	// version of the change that made it leave.
	left := next(t, sel)
	if p := left.Object.(*v1.Pod); left.Type != watch.Deleted || p.Name != "web" || p.Labels["app"] != "web" {
		t.Fatalf("selected watch: want DELETED web as it leaves, with its last matching labels, got %s %v", left.Type, left.Object)
	}
	if ev := next(t, w); ev.Type != watch.Modified || ev.Object.(*v1.Pod).ResourceVersion != left.Object.(*v1.Pod).ResourceVersion {
		t.Fatalf("want MODIFIED web (labels) at the version of the selected DELETED (%s), got %s %v",
			left.Object.(*v1.Pod).ResourceVersion, ev.Type, ev.Object)
	}
	if err := f.st.DeletePod("default/db"); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != watch.Deleted || ev.Object.(*v1.Pod).Name != "db" {
		t.Fatalf("want DELETED db, got %s %v", ev.Type, ev.Object)
	}

	// Resuming from a version replays what came after it.
	again, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Stop()
	if ev := next(t, again); ev.Type != watch.Modified || ev.Object.(*v1.Pod).Labels["app"] != "other" {
		t.Fatalf("resumed: want MODIFIED web (labels), got %s %v", ev.Type, ev.Object)
	}
	if ev := next(t, again); ev.Type != watch.Deleted {
		t.Fatalf("resumed: want DELETED db, got %s", ev.Type)
	}
}

func TestWatchTooOldIsGone(t *testing.T) {
	f := newFixture(t, Options{})
	_, err := f.cs.CoreV1().Pods("").Watch(context.Background(), metav1.ListOptions{ResourceVersion: "12"})
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("watch from an old version: %v", err)
	}
}

// tableAccept is kubectl's Accept for Tables.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

// rawWatch opens a watch at path with accept and returns its event lines.
func rawWatch(t *testing.T, f *fixture, path, accept string) (<-chan map[string]json.RawMessage, context.CancelFunc) {
	t.Helper()
	return rawWatchAs(t, f, path, accept, "")
}

// rawWatchAs is rawWatch with a bearer token (none if empty).
func rawWatchAs(t *testing.T, f *fixture, path, accept, token string) (<-chan map[string]json.RawMessage, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %s", path, resp.Status)
	}
	ch := make(chan map[string]json.RawMessage)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				ch <- ev
			}
		}
	}()
	t.Cleanup(cancel)
	return ch, cancel
}

func nextRaw(t *testing.T, ch <-chan map[string]json.RawMessage) (string, json.RawMessage) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			return "", nil
		}
		var typ string
		_ = json.Unmarshal(ev["type"], &typ)
		return typ, ev["object"]
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event")
	}
	return "", nil
}

// waitTimers waits until n timers of the watch are set on the fake clock.
func waitTimers(t *testing.T, f *fixture) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !f.clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("the watch set no timer")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestWatchInitialEventsBookmarksAndTimeout(t *testing.T) {
	f := newFixture(t, Options{})
	f.pod(t, "file", "default", "web", nil, v1.PodStatus{})
	ch, _ := rawWatch(t, f, "/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=300", "")
	if typ, obj := nextRaw(t, ch); typ != WatchAdded || !strings.Contains(string(obj), `"name":"web"`) {
		t.Fatalf("want ADDED web, got %s %s", typ, obj)
	}
	typ, obj := nextRaw(t, ch)
	var mark v1.Pod
	_ = json.Unmarshal(obj, &mark)
	if typ != WatchBookmark || mark.Annotations[InitialEventsEnd] != "true" || mark.ResourceVersion == "" {
		t.Fatalf("want the initial-events-end BOOKMARK, got %s %s", typ, obj)
	}
	waitTimers(t, f)
	f.clk.Step(bookmarkInterval)
	if typ, obj := nextRaw(t, ch); typ != WatchBookmark || strings.Contains(string(obj), InitialEventsEnd) {
		t.Fatalf("want a periodic BOOKMARK, got %s %s", typ, obj)
	}
	waitTimers(t, f)
	f.clk.Step(300 * time.Second)
	for {
		typ, _ := nextRaw(t, ch)
		if typ == "" {
			break // the stream ended at timeoutSeconds
		}
		if typ != WatchBookmark {
			t.Fatalf("unexpected %s", typ)
		}
	}
}

func TestWatchTable(t *testing.T) {
	f := newFixture(t, Options{})
	f.pod(t, "file", "default", "web", nil, running("10.0.0.2"))
	ch, _ := rawWatch(t, f, "/api/v1/namespaces/default/pods?watch=true",
		"application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
	typ, obj := nextRaw(t, ch)
	var tab metav1.Table
	if err := json.Unmarshal(obj, &tab); err != nil || typ != WatchAdded || tab.Kind != "Table" || len(tab.ColumnDefinitions) != len(printers.PodColumns) ||
		len(tab.Rows) != 1 || tab.Rows[0].Cells[0] != "web" {
		t.Fatalf("first event: %s %s (%v)", typ, obj, err)
	}
	f.pod(t, "file", "default", "db", nil, v1.PodStatus{})
	typ, obj = nextRaw(t, ch)
	tab = metav1.Table{}
	if err := json.Unmarshal(obj, &tab); err != nil || typ != WatchAdded || len(tab.ColumnDefinitions) != 0 ||
		len(tab.Rows) != 1 || tab.Rows[0].Cells[0] != "db" || tab.Rows[0].Cells[2] != "Pending" {
		t.Fatalf("second event: %s %s (%v)", typ, obj, err)
	}
}

// TestWatchDeletedPodIsTerminating: a pod the store dropped while its
// container runs is served Terminating (deletionTimestamp at the API's
// clock) until the container is gone, then DELETED with that stamp; a pod
// without containers is DELETED at once, stamped too, so kubectl's printPod
// shows both Terminating.
func TestWatchDeletedPodIsTerminating(t *testing.T) {
	f := newFixture(t, Options{})
	web := f.pod(t, "file", "default", "web", nil, running("10.0.0.2"))
	f.pod(t, "file", "default", "db", nil, v1.PodStatus{})
	if _, err := f.st.UpsertContainer(&model.Container{ID: "c1", PodKey: web.Key, PodUID: string(web.Spec.UID),
		Name: "app", State: model.StateRunning, Seq: f.st.Seq()}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pods := f.cs.CoreV1().Pods("default")
	l, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	tab, _ := rawWatch(t, f, "/api/v1/namespaces/default/pods?watch=true&resourceVersion="+l.ResourceVersion,
		"application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
	status := func(obj json.RawMessage) string {
		var tb metav1.Table
		if err := json.Unmarshal(obj, &tb); err != nil || len(tb.Rows) != 1 {
			t.Fatalf("not a one-row Table: %s", obj)
		}
		return tb.Rows[0].Cells[2].(string)
	}

	f.clk.Step(time.Minute)
	deletedAt := t0.Add(time.Minute)
	if err := f.st.DeletePod("default/db"); err != nil {
		t.Fatal(err)
	}
	ev := next(t, w)
	if p := ev.Object.(*v1.Pod); ev.Type != watch.Deleted || p.Name != "db" || p.DeletionTimestamp == nil || !p.DeletionTimestamp.Time.Equal(deletedAt) {
		t.Fatalf("want DELETED db stamped %v, got %s %+v", deletedAt, ev.Type, ev.Object.(*v1.Pod).ObjectMeta)
	}
	if typ, obj := nextRaw(t, tab); typ != WatchDeleted || status(obj) != "Terminating" {
		t.Fatalf("Table: want DELETED db Terminating, got %s %s", typ, obj)
	}

	if err := f.st.DeletePod("default/web"); err != nil {
		t.Fatal(err)
	}
	ev = next(t, w)
	if p := ev.Object.(*v1.Pod); ev.Type != watch.Modified || p.Name != "web" || p.DeletionTimestamp == nil || !p.DeletionTimestamp.Time.Equal(deletedAt) {
		t.Fatalf("want MODIFIED web stamped %v while its container runs, got %s %+v", deletedAt, ev.Type, ev.Object.(*v1.Pod).ObjectMeta)
	}
	if typ, obj := nextRaw(t, tab); typ != WatchModified || status(obj) != "Terminating" {
		t.Fatalf("Table: want MODIFIED web Terminating, got %s %s", typ, obj)
	}
	if p, err := pods.Get(ctx, "web", metav1.GetOptions{}); err != nil || p.DeletionTimestamp == nil {
		t.Fatalf("GET of a terminating pod: %v %v", p, err)
	}

	f.clk.Step(time.Minute)
	if err := f.st.DeleteContainer("c1", f.st.Seq()); err != nil {
		t.Fatal(err)
	}
	ev = next(t, w)
	if p := ev.Object.(*v1.Pod); ev.Type != watch.Deleted || p.Name != "web" || p.DeletionTimestamp == nil || !p.DeletionTimestamp.Time.Equal(deletedAt) {
		t.Fatalf("want DELETED web stamped when it began terminating, got %s %+v", ev.Type, ev.Object.(*v1.Pod).ObjectMeta)
	}
	if typ, obj := nextRaw(t, tab); typ != WatchDeleted || status(obj) != "Terminating" {
		t.Fatalf("Table: want DELETED web Terminating, got %s %s", typ, obj)
	}
	if _, err := pods.Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("GET after the container is gone: %v", err)
	}
}
