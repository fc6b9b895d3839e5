package kubeapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/informer"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/store"
)

// countingPusher is a Pusher that records the store's index as each Put
// and Delete returned, and counts every request the API's mux serves.
type countingPusher struct {
	Pusher
	st    *store.Store
	after atomic.Uint64
	calls atomic.Int32
}

func (c *countingPusher) Put(kind, ns, name string, data []byte, o sources.PutOptions) (sources.PutResult, error) {
	c.calls.Add(1)
	res, err := c.Pusher.Put(kind, ns, name, data, o)
	c.after.Store(c.st.Index())
	return res, err
}

func (c *countingPusher) Delete(kind, ns, name string, dryRun bool) error {
	c.calls.Add(1)
	err := c.Pusher.Delete(kind, ns, name, dryRun)
	c.after.Store(c.st.Index())
	return err
}

// A create, a replace, a patch and a delete are each one storage call that
// returns the stored object: the answer's resourceVersion is the store's
// index as the call returned, with the API's clock never stepped (nothing
// waits on a timer) and no request served but the client's own (no
// internal GET).
func TestWriteIsOneSynchronousStorageCall(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	st, err := store.New(nil, store.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	push := sources.NewPushSource("push", filepath.Join(t.TempDir(), "push"), sources.Options{})
	inf := informer.NewSourceInformer(st, clk, nil, nil)
	if err := inf.Register("push"); err != nil {
		t.Fatal(err)
	}
	push.SetApplier(inf.ApplyResult)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = push.Run(ctx, make(chan sources.Update)); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	api := New(Options{Store: st, Node: "node1", Clock: clk, Visible: func(*http.Request, *model.Pod) bool { return true }})
	cp := &countingPusher{Pusher: push, st: st}
	api.AddWrites(cp)
	mux := http.NewServeMux()
	for _, rt := range api.Routes() {
		mux.Handle(rt.Pattern, rt.Handler)
	}
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1); mux.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)

	do := func(method, path, ctype, body string) (int, map[string]any) {
		t.Helper()
		before := served.Load()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		if n := served.Load() - before; n != 1 {
			t.Fatalf("%s %s: %d requests served for one", method, path, n)
		}
		return resp.StatusCode, m
	}
	rv := func(m map[string]any) uint64 {
		md, _ := m["metadata"].(map[string]any)
		s, _ := md["resourceVersion"].(string)
		n, _ := strconv.ParseUint(s, 10, 64)
		return n
	}
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"k":"v1"}}`
	coll := "/api/v1/namespaces/default/configmaps"
	steps := []struct {
		name, method, path, ctype, body string
	}{
		{"create", "POST", coll, "application/json", cm},
		{"replace", "PUT", coll + "/cfg", "application/json", strings.Replace(cm, `"k":"v1"`, `"k":"v2"`, 1)},
		{"patch", "PATCH", coll + "/cfg", "application/merge-patch+json", `{"data":{"k":"v3"}}`},
	}
	for _, s := range steps {
		calls := cp.calls.Load()
		code, m := do(s.method, s.path, s.ctype, s.body)
		if code >= 300 {
			t.Fatalf("%s: %d %v", s.name, code, m)
		}
		if cp.calls.Load() != calls+1 {
			t.Fatalf("%s: %d storage calls", s.name, cp.calls.Load()-calls)
		}
		o, _ := st.Object(nil, model.KindConfigMap, "default/cfg")
		if got := rv(m); got == 0 || got != cp.after.Load() || o == nil || o.ModifyIndex != got {
			t.Fatalf("%s: answered resourceVersion %d; the store was at %d as the call returned, its row at %v", s.name, got, cp.after.Load(), o)
		}
	}
	if code, _ := do("DELETE", coll+"/cfg", "", ""); code != http.StatusOK {
		t.Fatalf("delete: %d", code)
	}
	if o, _ := st.Object(nil, model.KindConfigMap, "default/cfg"); o != nil {
		t.Fatal("the delete answered before the store dropped the object")
	}
}
