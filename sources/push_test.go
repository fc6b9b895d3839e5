package sources

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

func pushRequest(t *testing.T, srv *httptest.Server, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func nsPod(ns, name, image string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\nspec:\n  containers:\n  - name: c\n    image: " + image + "\n"
}

func newPushServer(t *testing.T, s *PushSource) *httptest.Server {
	mux := http.NewServeMux()
	for pattern, h := range s.Routes() {
		mux.Handle(pattern, h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestPushSourceLifecycle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "push")
	s := NewPushSource("push", dir, Options{})
	srv := newPushServer(t, s)
	updates := startSource(t, s)
	await(t, updates, 5*time.Second, "empty start", exactly())

	if code, body := pushRequest(t, srv, "POST", "/pods/default/web", podManifest("web", "nginx:1")); code != http.StatusCreated {
		t.Fatalf("POST: %d %s", code, body)
	}
	u := await(t, updates, 5*time.Second, "web", exactly("web"))
	if want := filepath.Join(dir, "default_web.yaml"); u.Pods[0].Origin != want {
		t.Errorf("origin %q, want %q", u.Pods[0].Origin, want)
	}
	if code, body := pushRequest(t, srv, "POST", "/pods/default/web", podManifest("web", "nginx:2")); code != http.StatusConflict {
		t.Errorf("second POST: %d %s", code, body)
	}
	if code, body := pushRequest(t, srv, "PUT", "/pods/default/web", podManifest("web", "nginx:2")); code != http.StatusOK {
		t.Errorf("PUT replace: %d %s", code, body)
	}
	await(t, updates, 5*time.Second, "web:2", func(u Update) bool { return exactly("web")(u) && podImage(u, "web") == "nginx:2" })
	if code, body := pushRequest(t, srv, "PUT", "/pods/kube-system/dns", nsPod("kube-system", "dns", "coredns")); code != http.StatusCreated {
		t.Errorf("PUT create: %d %s", code, body)
	}
	await(t, updates, 5*time.Second, "web, dns", exactly("dns", "web"))
	if code, body := pushRequest(t, srv, "DELETE", "/pods/default/web", ""); code != http.StatusOK {
		t.Errorf("DELETE: %d %s", code, body)
	}
	await(t, updates, 5*time.Second, "dns", exactly("dns"))
	if code, body := pushRequest(t, srv, "DELETE", "/pods/default/web", ""); code != http.StatusNotFound {
		t.Errorf("DELETE missing: %d %s", code, body)
	}

	// A new instance on the same directory (a restart of berth) reports
	// what was pushed before.
	u = <-startSource(t, NewPushSource("push", dir, Options{}))
	if !exactly("dns")(u) || u.Pods[0].Pod.Namespace != "kube-system" {
		t.Errorf("after restart: %s", describeFull(u))
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "kube-system_dns.yaml" {
			t.Errorf("stray file %s", e.Name())
		}
	}
}

func TestPushSourceRejects(t *testing.T) {
	s := NewPushSource("push", t.TempDir(), Options{})
	srv := newPushServer(t, s)
	cases := []struct {
		name, method, path, body string
		code                     int
		contains                 string
	}{
		{"name mismatch", "POST", "/pods/default/web", podManifest("other", "nginx"), 400, "does not match"},
		{"namespace mismatch", "PUT", "/pods/prod/web", podManifest("web", "nginx"), 400, "does not match"},
		{"garbage", "POST", "/pods/default/web", "kind: [", 400, "/pods/default/web"},
		{"empty", "POST", "/pods/default/web", "", 400, "no pod"},
		{"two pods", "POST", "/pods/default/a", podManifest("a", "x") + "---\n" + podManifest("b", "x"), 400, "exactly one"},
		{"bad namespace in URL", "POST", "/pods/Bad_NS/web", podManifest("web", "nginx"), 400, "namespace"},
		{"dot-dot name", "DELETE", "/pods/default/a..b", "", 400, "name"},
		{"escaped slash", "PUT", "/pods/default/x%2F..%2F..%2Fetc", podManifest("x", "nginx"), 400, "name"},
		{"invalid", "POST", "/pods/default/web", "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: c}]\n", 422,
			"/pods/default/web: default/web: spec.containers[0].image: Required value"},
		{"unknown field", "PUT", "/pods/default/web", "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: c, image: x, imag: y}]\n", 422,
			"spec.containers[0].imag: unknown field"},
		{"too large", "POST", "/pods/default/web", podManifest("web", "nginx") + "# " + strings.Repeat("x", MaxPushBytes) + "\n", 413, "larger than 1 MiB"},
		{"host access", "POST", "/pods/default/hn", hostAccessCases[2].manifest, 422, "spec.hostNetwork: Forbidden"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := pushRequest(t, srv, tc.method, tc.path, tc.body)
			if code != tc.code || !strings.Contains(body, tc.contains) {
				t.Errorf("%s %s: %d %q, want %d containing %q", tc.method, tc.path, code, body, tc.code, tc.contains)
			}
		})
	}
	if code, _ := pushRequest(t, srv, "GET", "/pods/default/web", ""); code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", code)
	}
	entries, _ := os.ReadDir(s.dir)
	if len(entries) != 0 {
		t.Errorf("rejected pushes left %d files", len(entries))
	}
}

func TestPushSourceHostAccess(t *testing.T) {
	for _, tc := range hostAccessCases {
		t.Run(tc.name, func(t *testing.T) {
			path := "/pods/default/" + tc.pod
			denied := newPushServer(t, NewPushSource("push", t.TempDir(), Options{}))
			code, body := pushRequest(t, denied, "PUT", path, tc.manifest)
			if code != http.StatusUnprocessableEntity || !strings.Contains(body, tc.field+`: Forbidden: violates PodSecurity "baseline"`) {
				t.Errorf("denied: %d %q", code, body)
			}
			allowed := newPushServer(t, NewPushSource("push", t.TempDir(), Options{Options: manifest.Options{Level: model.LevelPrivileged}}))
			if code, body := pushRequest(t, allowed, "PUT", path, tc.manifest); code != http.StatusCreated {
				t.Errorf("allowed: %d %q", code, body)
			}
		})
	}
}

// The handlers never wait for Run: pushes succeed while nobody consumes
// updates, and the latest state is reported once Run is read.
func TestPushSourceHandlerDoesNotBlock(t *testing.T) {
	s := NewPushSource("push", t.TempDir(), Options{})
	srv := newPushServer(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan Update)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, out) }()
	for _, name := range []string{"a", "b", "c", "d"} {
		finished := make(chan int, 1)
		go func() {
			code, _ := pushRequest(t, srv, "PUT", "/pods/default/"+name, podManifest(name, "busybox"))
			finished <- code
		}()
		select {
		case code := <-finished:
			if code != http.StatusCreated {
				t.Fatalf("PUT %s: %d", name, code)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("PUT blocked on an unread Run")
		}
	}
	await(t, out, 5*time.Second, "all pushed pods", exactly("a", "b", "c", "d"))
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
}

func TestPushSourcePersistedGarbage(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "default_ok.yaml", podManifest("ok", "busybox"))
	write(t, dir, "default_bad.yaml", "kind: [")
	write(t, dir, ".push-123.tmp", podManifest("tmp", "busybox"))
	u := <-startSource(t, NewPushSource("push", dir, Options{}))
	if !hasPods("ok")(u) || len(u.Errors) != 1 || u.Errors[0].Origin != filepath.Join(dir, "default_bad.yaml") || u.Errors[0].PodKey != "" {
		t.Errorf("update %s", describeFull(u))
	}
}

// scan is the source's update as Run's next one would be (applied through
// the applier when it has one).
func (s *PushSource) scan() Update {
	u, _ := s.scanApply()
	return u
}

// With an applier, each write is applied in its call: the source keeps no
// per-write history, and a failed apply is left to Run, which applies the
// whole set again (the write is persisted).
func TestPushApplierWritesKeepNothingAndRetryOnFailure(t *testing.T) {
	s := NewPushSource("push", t.TempDir(), Options{})
	var calls int
	fail := false
	s.SetApplier(func(u Update) (Applied, error) {
		calls++
		if fail {
			return Applied{}, errors.New("store down")
		}
		return Applied{Refused: map[string]string{"ConfigMap/default/b": "refused b"}}, nil
	})
	for _, name := range []string{"a", "b", "c"} {
		res, err := s.Put("ConfigMap", "default", name, namedCM(name, 10), PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"b": "refused b"}[name]; res.Refusal != want {
			t.Fatalf("%s: refusal %q, want %q", name, res.Refusal, want)
		}
	}
	if calls != 3 {
		t.Fatalf("%d applies for 3 writes", calls)
	}
	if len(s.files.added) != 0 || len(s.files.dropped) != 0 {
		t.Fatalf("the source keeps %d added and %d dropped pods after its writes", len(s.files.added), len(s.files.dropped))
	}
	fail = true
	if _, err := s.Put("ConfigMap", "default", "d", namedCM("d", 10), PutOptions{}); err == nil {
		t.Fatal("a failed apply answered no error")
	}
	select {
	case <-s.changed:
	default:
		t.Fatal("a failed apply did not ask Run to apply the set again")
	}
}

// A pod written through an applier has its warning lines logged once, as
// Run logs those of the files it reads.
func TestPushApplierLogsWarnings(t *testing.T) {
	var buf bytes.Buffer
	s := NewPushSource("push", t.TempDir(), Options{})
	s.opts.Log = slog.New(slog.NewTextHandler(&buf, nil))
	s.SetApplier(func(Update) (Applied, error) { return Applied{}, nil })
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  serviceAccountName: app\n  containers: [{name: c, image: img}]\n"
	for range 2 {
		if _, err := s.Put("Pod", "default", "web", []byte(pod), PutOptions{Replace: true}); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(buf.String(), "ignored without a cluster"); n != 1 {
		t.Fatalf("%d warning lines for one spec written twice:\n%s", n, buf.String())
	}
}
