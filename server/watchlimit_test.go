package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/kubeapi"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/runtime/fake"
	"github.com/berth-dev/berth/store"
)

// limitedAPI serves /pods, the logs and the Kubernetes API with admin and
// push tokens (none when admin is nil) and the watch caps given.
func limitedAPI(t *testing.T, admin []string, total, perToken int) (*Server, string) {
	t.Helper()
	st, _ := store.New(nil)
	s := New(Options{Store: st, Tokens: admin, PushTokens: []string{"pusher"}, MaxWatches: total, MaxWatchesPerToken: perToken})
	RegisterLogs(s, nil)
	RegisterKube(s, kubeapi.New(kubeapi.Options{Store: st, Visible: s.Visible}).Routes())
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv.URL
}

// hold opens GET path with token and returns its status, body (read whole
// unless 200) and, for a 200, the function that closes it.
func hold(t *testing.T, url, token string) (code int, body string, retryAfter string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp.StatusCode, "", "", func() { cancel(); resp.Body.Close() }
	}
	defer cancel()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Retry-After"), nil
}

// TestWatchCaps: one token holds at most the per-token cap of watches and
// followed logs, all tokens together the total cap; the next is a 429 with
// Retry-After (a TooManyRequests Status under /api), and a closed watch
// gives its slot back. Other requests are not counted.
func TestWatchCaps(t *testing.T) {
	s, base := limitedAPI(t, []string{"admin"}, 3, 2)
	_, _, _, w1 := hold(t, base+"/pods?watch=1", "pusher")
	code, _, _, w2 := hold(t, base+"/api/v1/pods?watch=true", "pusher")
	if w1 == nil || code != http.StatusOK {
		t.Fatalf("the push token's first two watches: %d", code)
	}
	defer w2()
	code, body, retry, _ := hold(t, base+"/api/v1/namespaces/default/configmaps?watch=1", "pusher")
	var st metav1.Status
	if err := json.Unmarshal([]byte(body), &st); err != nil || code != http.StatusTooManyRequests || retry != "1" ||
		st.Reason != metav1.StatusReasonTooManyRequests || st.Details == nil || st.Details.RetryAfterSeconds != 1 ||
		!strings.Contains(st.Message, "server.max_watches_per_token") {
		t.Fatalf("the push token's third watch: %d Retry-After %q %s", code, retry, body)
	}
	if code, _ := do(t, "GET", base+"/pods?watch=false", "pusher", nil); code != http.StatusOK {
		t.Fatalf("a list beside the watches: %d", code)
	}
	_, _, _, a1 := hold(t, base+"/pods?watch=1", "admin")
	if a1 == nil {
		t.Fatal("the admin's first watch is refused")
	}
	defer a1()
	code, body, retry, _ = hold(t, base+"/containerLogs/default/web/app?follow", "admin")
	if code != http.StatusTooManyRequests || retry != "1" || !strings.Contains(body, "server.max_watches") ||
		strings.Contains(body, "per_token") {
		t.Fatalf("followed logs over the total cap: %d Retry-After %q %s", code, retry, body)
	}

	w1()
	waitSlots(t, s.watches, 2)
	code, _, _, w3 := hold(t, base+"/pods?watch=1", "pusher")
	if code != http.StatusOK {
		t.Fatalf("a watch after one closed: %d", code)
	}
	w3()
}

// Without admin tokens, requests without a known token share one slot
// count: a made-up token does not open another.
func TestWatchCapOfUnknownTokens(t *testing.T) {
	_, base := limitedAPI(t, nil, 10, 1)
	_, _, _, stop := hold(t, base+"/pods?watch=1", "")
	if stop == nil {
		t.Fatal("the anonymous watch is refused")
	}
	defer stop()
	if code, _, _, _ := hold(t, base+"/pods?watch=1", "made-up"); code != http.StatusTooManyRequests {
		t.Fatalf("a made-up token's watch: %d, want 429", code)
	}
	_, _, _, push := hold(t, base+"/pods?watch=1", "pusher")
	if push == nil {
		t.Fatal("the push token's watch is refused")
	}
	push()
}

func TestHoldsOpen(t *testing.T) {
	for target, want := range map[string]bool{
		"/pods":                    false,
		"/pods?watch=1":            true,
		"/pods?watch=0":            false,
		"/api/v1/pods?watch=true":  true,
		"/api/v1/pods?watch":       true,
		"/api/v1/pods?watch=bogus": true,
		"/api/v1/pods?follow=true": false,
	} {
		if got := holdsOpen(httptest.NewRequest("GET", target, nil)); got != want {
			t.Errorf("%s: %v, want %v", target, got, want)
		}
	}
	if holdsOpen(httptest.NewRequest("POST", "/pods?watch=1", nil)) {
		t.Error("a POST holds open")
	}
	if !holdsOpen(httptest.NewRequest("HEAD", "/pods?watch=1", nil)) {
		t.Error("a HEAD watch, served by the GET route, does not hold open")
	}
}

// Every route of logs berth mounts is a log route, followed or not.
func TestLogRoutes(t *testing.T) {
	for pattern, want := range map[string]bool{
		"GET /containerLogs/{ns}/{pod}/{container}":                   true,
		"GET /logs/{path...}":                                         true,
		"GET /api/v1/namespaces/{ns}/pods/{name}/log":                 true,
		"GET /api/v1/nodes/{node}/proxy/logs/{path...}":               true,
		"GET /api/v1/namespaces/{ns}/pods/{name}":                     false,
		"GET /api/v1/namespaces/{ns}/configmaps":                      false,
		"POST /api/v1/namespaces/{ns}/pods/{name}/exec":               false,
		"GET /pods/{ns}/{name}":                                       false,
		"PATCH /api/v1/namespaces/{ns}/persistentvolumeclaims/{name}": false,
	} {
		if got := logRoute(pattern); got != want {
			t.Errorf("%s: %v, want %v", pattern, got, want)
		}
	}
}

// A HEAD is served by the GET routes: a HEAD watch is held open like a
// GET one and takes a slot.
func TestHeadWatchTakesASlot(t *testing.T) {
	_, base := limitedAPI(t, []string{"admin"}, 10, 1)
	// On a connection of its own, kept open after the answer's headers
	// (an HTTP client takes a HEAD as done there and closes or reuses it).
	headWatch := func() (status string, stop func()) {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "HEAD /api/v1/pods?watch=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer pusher\r\n\r\n")
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			c.Close()
			t.Fatal(err)
		}
		return strings.TrimSpace(line), func() { c.Close() }
	}
	status, stop := headWatch()
	defer stop()
	if status != "HTTP/1.1 200 OK" {
		t.Fatalf("the first HEAD watch: %s", status)
	}
	status, stop2 := headWatch()
	defer stop2()
	if status != "HTTP/1.1 429 Too Many Requests" {
		t.Fatalf("a second HEAD watch over the per-token cap of 1: %s, want 429", status)
	}
}

// stalledLogs is a LogSource whose first stream never ends before its
// client leaves: a long log read by a slow client.
type stalledLogs struct {
	once    sync.Once
	entered chan struct{}
}

func (s *stalledLogs) Logs(ctx context.Context, id string, opts runtime.LogOptions) (io.ReadCloser, error) {
	stall := false
	s.once.Do(func() { stall = true })
	if !stall {
		return io.NopCloser(strings.NewReader("line\n")), nil
	}
	close(s.entered)
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestLogReadsTakeASlot: a log read holds an engine stream until its
// client has read it all, however long that takes, followed or not (the
// apiserver counts the log subresource as long-running): it takes a slot.
func TestLogReadsTakeASlot(t *testing.T) {
	st, _ := store.New(nil)
	rt := fake.New(nil)
	rt.AddImage("img")
	labels := map[string]string{runtime.LabelPodNamespace: "default", runtime.LabelPodName: "web",
		runtime.LabelContainerName: "app", runtime.LabelAttempt: "0"}
	id, err := rt.CreateContainer(context.Background(), &runtime.ContainerConfig{Name: "c", Image: "img", Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := rt.InspectContainer(context.Background(), id)
	_, _ = st.UpsertContainer(c)
	s := New(Options{Store: st, Tokens: []string{"admin"}, MaxWatches: 10, MaxWatchesPerToken: 1})
	src := &stalledLogs{entered: make(chan struct{})}
	RegisterLogs(s, src)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/containerLogs/default/web/app", nil)
		req.Header.Set("Authorization", "Bearer admin")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-src.entered
	if code, body := do(t, "GET", srv.URL+"/containerLogs/default/web/app?follow=false", "admin", nil); code != http.StatusTooManyRequests {
		t.Fatalf("a log read beside a stalled one, over the per-token cap of 1: %d %s", code, body)
	}
}
