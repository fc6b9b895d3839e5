package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/kubeapi"
	"github.com/berth-dev/berth/store"
)

// parked is a handler that holds each request until its test frees it by
// its ?id= (or the client leaves); entered receives once per request taken
// in.
type parked struct {
	entered chan struct{}
	stop    chan struct{} // closed at the test's end: every request ends
	mu      sync.Mutex
	free    map[string]chan struct{}
}

func newParked() *parked {
	return &parked{entered: make(chan struct{}), stop: make(chan struct{}), free: map[string]chan struct{}{}}
}

func (p *parked) gate(id string) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.free[id] == nil {
		p.free[id] = make(chan struct{})
	}
	return p.free[id]
}

// release lets the request of id be answered 200.
func (p *parked) release(id string) { close(p.gate(id)) }

func (p *parked) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case p.entered <- struct{}{}:
	case <-r.Context().Done():
		return
	case <-p.stop:
		return
	}
	select {
	case <-p.gate(r.URL.Query().Get("id")):
		w.WriteHeader(http.StatusOK)
	case <-r.Context().Done():
	case <-p.stop:
	}
}

// mutatingAPI serves a parked push route and a parked Kubernetes API write
// route, with admin and push tokens and the mutating caps given.
func mutatingAPI(t *testing.T, total, perToken int) (*Server, string, *parked) {
	t.Helper()
	st, _ := store.New(nil)
	s := New(Options{Store: st, Tokens: []string{"admin"}, PushTokens: []string{"pusher"},
		MaxMutatingRequests: total, MaxMutatingRequestsPerToken: perToken})
	p := newParked()
	RegisterPush(s, "push", map[string]http.Handler{"PUT /pods/{ns}/{name}": p, "DELETE /pods/{ns}/{name}": p})
	routes := kubeapi.New(kubeapi.Options{Store: st, Visible: s.Visible}).Routes()
	routes = append(routes, kubeapi.Route{Pattern: "PATCH /api/v1/namespaces/{ns}/configmaps/{name}", Access: kubeapi.AccessWrite, Handler: p})
	RegisterKube(s, routes)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(p.stop) })
	return s, srv.URL, p
}

// inFlight sends method url with token in the background and returns once
// the handler has taken it in; done receives its status when it is
// answered.
func inFlight(t *testing.T, p *parked, method, url, token string) (done chan int) {
	t.Helper()
	done = make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(method, url, strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	select {
	case <-p.entered:
	case code := <-done:
		t.Fatalf("%s %s: answered %d before the handler took it in", method, url, code)
	}
	return done
}

// refused sends method url with token, which must be answered without
// reaching p: its status, body, Retry-After and whether the server closes
// the connection.
func refused(t *testing.T, p *parked, method, url, token string) (code int, body, retryAfter string, closed bool) {
	t.Helper()
	type answer struct {
		resp *http.Response
		body []byte
		err  error
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- answer{resp, b, err}
	}()
	select {
	case <-p.entered:
		t.Fatalf("%s %s by %s was served over the cap", method, url, token)
	case a := <-done:
		if a.err != nil {
			t.Fatal(a.err)
		}
		return a.resp.StatusCode, string(a.body), a.resp.Header.Get("Retry-After"), a.resp.Close
	}
	return
}

// waitSlots waits until l holds n slots (a slot is given back when its
// handler returns, which the client may see answered just before).
func waitSlots(t *testing.T, l *inflightLimit, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		open := l.open
		l.mu.Unlock()
		if open == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d slots held, want %d", open, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestMutatingRequestCaps: one token has at most the per-token cap of
// mutating requests in flight (push routes and Kubernetes API writes
// together), all tokens the total cap; the next is a 429 with Retry-After
// (a TooManyRequests Status under /api) that leaves the connection open,
// a finished request gives its slot back, and reads are not counted.
func TestMutatingRequestCaps(t *testing.T) {
	s, base, p := mutatingAPI(t, 3, 2)
	cm := base + "/api/v1/namespaces/default/configmaps/c"
	first := inFlight(t, p, "PATCH", cm+"?id=1", "pusher")
	second := inFlight(t, p, "PUT", base+"/pods/default/web?id=2", "pusher")

	code, body, retry, closed := refused(t, p, "PATCH", cm, "pusher")
	var st metav1.Status
	if err := json.Unmarshal([]byte(body), &st); err != nil || code != http.StatusTooManyRequests || retry != "1" ||
		st.Reason != metav1.StatusReasonTooManyRequests || st.Details == nil || st.Details.RetryAfterSeconds != 1 ||
		!strings.Contains(st.Message, "server.max_mutating_requests_per_token") || closed {
		t.Fatalf("the push token's third write: %d Retry-After %q connection closed %v %s", code, retry, closed, body)
	}
	if code, body, retry, _ := refused(t, p, "PUT", base+"/pods/default/web", "pusher"); code != http.StatusTooManyRequests ||
		retry != "1" || !strings.Contains(body, "server.max_mutating_requests_per_token") {
		t.Fatalf("the push token's third push: %d Retry-After %q %s", code, retry, body)
	}
	for _, path := range []string{"/pods", "/api/v1/namespaces/default/configmaps", "/api/v1/namespaces/default/configmaps/c"} {
		if code, body := do(t, "GET", base+path, "pusher", nil); code == http.StatusTooManyRequests {
			t.Fatalf("a read beside the writes, GET %s: %d %s", path, code, body)
		}
	}

	admin := inFlight(t, p, "DELETE", base+"/pods/default/web?id=3", "admin")
	code, body, _, _ = refused(t, p, "PATCH", cm, "admin")
	if code != http.StatusTooManyRequests || !strings.Contains(body, "server.max_mutating_requests") ||
		strings.Contains(body, "per_token") {
		t.Fatalf("a write over the total cap: %d %s", code, body)
	}

	p.release("1")
	if code := <-first; code != http.StatusOK {
		t.Fatalf("the first write: %d", code)
	}
	waitSlots(t, s.mutating, 2)
	again := inFlight(t, p, "PATCH", cm+"?id=4", "pusher")
	for _, id := range []string{"2", "3", "4"} {
		p.release(id)
	}
	for _, c := range []chan int{second, admin, again} {
		if code := <-c; code != http.StatusOK {
			t.Fatalf("a parked write: %d", code)
		}
	}
	waitSlots(t, s.mutating, 0)
}

// Each request counts under one cap at most: watches and log reads under
// the watch caps, writes under the mutating caps, exec (held open, admin
// only) and plain reads under none.
func TestLimitOf(t *testing.T) {
	st, _ := store.New(nil)
	s := New(Options{Store: st, MaxWatches: 1, MaxMutatingRequests: 1})
	for _, tc := range []struct {
		a       access
		logs    bool
		method  string
		target  string
		want    *inflightLimit
		holding bool
	}{
		{accessPods, false, "GET", "/api/v1/pods?watch=1", s.watches, true},
		{accessPods, false, "HEAD", "/pods?watch", s.watches, true},
		{accessPods, true, "GET", "/api/v1/namespaces/a/pods/b/log", s.watches, true},
		{accessAdmin, true, "GET", "/containerLogs/a/b/c?follow=false", s.watches, true},
		{accessPods, false, "GET", "/api/v1/pods", nil, false},
		{accessPush, false, "POST", "/api/v1/namespaces/a/configmaps", s.mutating, false},
		{accessPush, false, "PATCH", "/api/v1/namespaces/a/configmaps/b", s.mutating, false},
		{accessPush, false, "PUT", "/pods/a/b", s.mutating, false},
		{accessAdmin, false, "DELETE", "/persistentvolumeclaims/a/b", s.mutating, false},
		{accessExec, false, "POST", "/api/v1/namespaces/a/pods/b/exec?command=sh", nil, false},
		{accessExec, false, "POST", "/exec/a/b/c", nil, false},
	} {
		got, holding := s.limitOf(tc.a, tc.logs, httptest.NewRequest(tc.method, tc.target, nil))
		if got != tc.want || holding != tc.holding {
			t.Errorf("%s %s: %p %v, want %p %v", tc.method, tc.target, got, holding, tc.want, tc.holding)
		}
	}
}
