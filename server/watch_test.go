package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/kubeapi"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

func watchPod(name string) *model.Pod {
	return &model.Pod{Key: "default/" + name, Source: "file", Origin: "/p/" + name + ".yaml",
		Spec:   &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}},
		Status: v1.PodStatus{Phase: v1.PodPending}}
}

// watchServer serves s on a real http.Server with limits l; done receives
// once per finished watch request.
func watchServer(t *testing.T, st *store.Store, l Limits) (base string, done chan struct{}) {
	t.Helper()
	return watchServerOn(t, st, nil, l)
}

// watchServerOn is watchServer with the server on clock clk.
func watchServerOn(t *testing.T, st *store.Store, clk clock.Clock, l Limits) (base string, done chan struct{}) {
	t.Helper()
	s := New(Options{Store: st, Tokens: []string{"tok"}, Clock: clk})
	done = make(chan struct{}, 16)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ServeHTTP(w, r)
		if r.URL.Query().Has("watch") {
			done <- struct{}{}
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpServer(ln.Addr().String(), h, l)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String(), done
}

// watcher is an open GET /pods?watch=1 whose events arrive on ch.
type watcher struct {
	ch     chan WatchEvent
	cancel context.CancelFunc
}

func openWatch(t *testing.T, base string) *watcher {
	t.Helper()
	return openWatchQuery(t, base, "watch=1")
}

func openWatchQuery(t *testing.T, base, query string) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/pods?"+query, nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch: %s", resp.Status)
	}
	w := &watcher{ch: make(chan WatchEvent, 1024), cancel: cancel}
	go func() { // ends when the body ends: server gone or cancel
		defer resp.Body.Close()
		defer close(w.ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev WatchEvent
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Errorf("watch line %q: %v", sc.Text(), err)
				return
			}
			w.ch <- ev
		}
	}()
	return w
}

func (w *watcher) next(t *testing.T) WatchEvent {
	t.Helper()
	select {
	case ev, ok := <-w.ch:
		if !ok {
			t.Fatal("watch stream ended")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no watch event within 5s")
	}
	return WatchEvent{}
}

func expectEvent(t *testing.T, ev WatchEvent, typ, name string) {
	t.Helper()
	if ev.Type != typ || ev.Object.Name != name {
		t.Fatalf("event %s %s, want %s %s", ev.Type, ev.Object.Name, typ, name)
	}
}

func TestWatchPodsAddModifyDelete(t *testing.T) {
	st, _ := store.New(nil)
	_ = st.UpsertPod(watchPod("a"))
	_ = st.UpsertPod(watchPod("b"))
	// A read limit far shorter than the watch: it must not cut the stream.
	base, _ := watchServer(t, st, Limits{ReadHeader: 200 * time.Millisecond, Read: 200 * time.Millisecond, Idle: time.Second, HeaderBytes: 64 << 10})
	w := openWatch(t, base)

	expectEvent(t, w.next(t), kubeapi.WatchAdded, "a")
	ev := w.next(t)
	expectEvent(t, ev, kubeapi.WatchAdded, "b")
	if ev.Object.Annotations["berth.io/origin"] != "/p/b.yaml" || ev.Object.Status.Phase != v1.PodPending {
		t.Fatalf("ADDED object is not the rendered pod: %+v", ev.Object)
	}

	// Let the connection's read deadline pass.
	readDeadlinePassed(t, strings.TrimPrefix(base, "http://"))

	_ = st.UpsertPod(watchPod("c"))
	expectEvent(t, w.next(t), kubeapi.WatchAdded, "c")

	if _, err := st.UpdatePod("default/a", func(p *model.Pod) bool { p.Status.Phase = v1.PodRunning; return true }); err != nil {
		t.Fatal(err)
	}
	ev = w.next(t)
	expectEvent(t, ev, kubeapi.WatchModified, "a")
	if ev.Object.Status.Phase != v1.PodRunning {
		t.Fatalf("MODIFIED phase %s", ev.Object.Status.Phase)
	}

	// A write that changes nothing the API shows sends nothing: the next
	// event is the deletion after it.
	if _, err := st.UpdatePod("default/b", func(p *model.Pod) bool { return true }); err != nil {
		t.Fatal(err)
	}
	_ = st.DeletePod("default/b")
	ev = w.next(t)
	expectEvent(t, ev, kubeapi.WatchDeleted, "b")
	if ev.Object.DeletionTimestamp == nil || ev.Object.Annotations["berth.io/source"] != "file" {
		t.Fatalf("DELETED object lacks deletionTimestamp or its last state: %+v", ev.Object.ObjectMeta)
	}
	select {
	case ev := <-w.ch:
		t.Fatalf("unexpected event %s %s", ev.Type, ev.Object.Name)
	default:
	}
}

func TestWatchPodsCoalescesABusyStore(t *testing.T) {
	st, _ := store.New(nil)
	_ = st.UpsertPod(watchPod("busy"))
	clk := clocktesting.NewFakeClock(time.Now())
	base, _ := watchServerOn(t, st, clk, DefaultLimits)
	w := openWatch(t, base)
	expectEvent(t, w.next(t), kubeapi.WatchAdded, "busy")

	// held waits until the watch holds a change back on its clock.
	held := func() {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !clk.HasWaiters(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the watch does not hold a change back for watchInterval")
			}
		}
	}
	const busy = 500 * time.Millisecond
	n, modified := 0, 0
	for start := clk.Now(); clk.Since(start) < busy; {
		n++
		msg := clk.Now().String()
		_, _ = st.UpdatePod("default/busy", func(p *model.Pod) bool { p.Status.Message = msg; return true })
		held()
		clk.Step(time.Millisecond) // the write rate of a busy store
		if !clk.HasWaiters() {     // an interval ended: the writes so far are sent
			if ev := w.next(t); ev.Type != kubeapi.WatchModified {
				t.Fatalf("event %s after %d writes, want MODIFIED", ev.Type, n)
			}
			modified++
		}
	}
	_ = st.DeletePod("default/busy")
	held()
	clk.Step(watchInterval)
	for {
		ev := w.next(t)
		if ev.Type == kubeapi.WatchDeleted {
			break
		}
		modified++
	}
	if max := int(busy/watchInterval) + 3; modified > max || modified == 0 {
		t.Fatalf("%d writes over %s gave %d MODIFIED events, want 1..%d", n, busy, modified, max)
	}
}

func TestWatchPodsEndsWhenClientLeaves(t *testing.T) {
	st, _ := store.New(nil)
	_ = st.UpsertPod(watchPod("a"))
	base, done := watchServer(t, st, DefaultLimits)
	w := openWatch(t, base)
	expectEvent(t, w.next(t), kubeapi.WatchAdded, "a")
	w.cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("watch handler still running 5s after the client left")
	}
}

func TestWatchParam(t *testing.T) {
	st, _ := store.New(nil)
	base, _ := watchServer(t, st, DefaultLimits)
	if code, _ := do(t, "GET", base+"/pods?watch=maybe", "tok", nil); code != http.StatusBadRequest {
		t.Errorf("watch=maybe: %d, want 400", code)
	}
	if code, body := do(t, "GET", base+"/pods?watch=false", "tok", nil); code != 200 || !json.Valid([]byte(body)) {
		t.Errorf("watch=false: %d %q, want the list", code, body)
	}
	if code, _ := do(t, "GET", base+"/pods?watch=1", "", nil); code != http.StatusUnauthorized {
		t.Errorf("watch without token: %d, want 401", code)
	}
}

func TestWatchPodsBookmarksTheInitialEvents(t *testing.T) {
	st, _ := store.New(nil)
	_ = st.UpsertPod(watchPod("a"))
	_ = st.UpsertPod(watchPod("b"))
	base, _ := watchServer(t, st, DefaultLimits)
	w := openWatchQuery(t, base, "watch=true&sendInitialEvents=true")
	expectEvent(t, w.next(t), kubeapi.WatchAdded, "a")
	expectEvent(t, w.next(t), kubeapi.WatchAdded, "b")
	if ev := w.next(t); ev.Type != kubeapi.WatchBookmark || ev.Object.Annotations[kubeapi.InitialEventsEnd] != "true" {
		t.Fatalf("after the initial events: %s %v, want the bookmark", ev.Type, ev.Object.Annotations)
	}
	_ = st.DeletePod("default/a")
	expectEvent(t, w.next(t), kubeapi.WatchDeleted, "a")

	// Without the parameter: no bookmark.
	_ = st.UpsertPod(watchPod("c"))
	plain := openWatch(t, base)
	expectEvent(t, plain.next(t), kubeapi.WatchAdded, "b")
	expectEvent(t, plain.next(t), kubeapi.WatchAdded, "c")
	_ = st.DeletePod("default/b")
	expectEvent(t, plain.next(t), kubeapi.WatchDeleted, "b")
}
