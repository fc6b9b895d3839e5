package sources

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

const pollEvery = 20 * time.Millisecond

// manifestServer serves a body that tests change; it counts requests.
type manifestServer struct {
	*httptest.Server
	mu       sync.Mutex
	body     string
	status   int
	requests atomic.Int32
	header   http.Header // last request's headers
	host     string
}

func newManifestServer(t *testing.T, body string) *manifestServer {
	m := &manifestServer{body: body, status: http.StatusOK}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.requests.Add(1)
		m.mu.Lock()
		m.header, m.host = r.Header.Clone(), r.Host
		body, status := m.body, m.status
		m.mu.Unlock()
		if status != http.StatusOK {
			http.Error(w, "server says no", status)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *manifestServer) set(body string, status int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.body, m.status = body, status
}

func newTestHTTPSource(url string, headers map[string]string, opts Options) *HTTPSource {
	s := NewHTTPSource("http", url, pollEvery, headers, opts)
	s.Timeout = time.Second
	return s
}

func TestHTTPSourceAddUpdateDelete(t *testing.T) {
	srv := newManifestServer(t, podManifest("a", "busybox:1")+"---\n"+podManifest("b", "busybox:1"))
	updates := startSource(t, newTestHTTPSource(srv.URL, nil, Options{}))
	u := await(t, updates, 5*time.Second, "a, b", exactly("a", "b"))
	for _, d := range u.Pods {
		if d.Origin != srv.URL {
			t.Errorf("origin %q, want %q", d.Origin, srv.URL)
		}
	}
	if u.Source != "http" {
		t.Errorf("source %q", u.Source)
	}
	srv.set(podManifest("a", "busybox:2")+"---\n"+podManifest("c", "busybox:1"), http.StatusOK)
	await(t, updates, 5*time.Second, "a updated, b deleted, c added", func(u Update) bool {
		return exactly("a", "c")(u) && podImage(u, "a") == "busybox:2"
	})
	srv.set("", http.StatusOK)
	await(t, updates, 5*time.Second, "no pods", exactly())
}

func TestHTTPSourceFormats(t *testing.T) {
	cases := map[string]struct {
		body string
		pods []string
	}{
		"json pod": {`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"j"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`, []string{"j"}},
		"pod list": {"apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: p1}\n  spec: {containers: [{name: c, image: busybox}]}\n- metadata: {name: p2}\n  spec: {containers: [{name: c, image: busybox}]}\n", []string{"p1", "p2"}},
		"list":     {"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: l1}\n  spec: {containers: [{name: c, image: busybox}]}\n", []string{"l1"}},
		"legacy":   {"version: v1beta1\nid: old\ncontainers: [{name: c, image: busybox}]\n", []string{"old"}},
		"legacy list": {`[{"version":"v1beta1","id":"x","containers":[{"name":"c","image":"busybox"}]},` +
			`{"version":"v1beta1","id":"y","containers":[{"name":"c","image":"busybox"}]}]`, []string{"x", "y"}},
		"whitespace": {"  \n\t\n", nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := newManifestServer(t, tc.body)
			u := <-startSource(t, newTestHTTPSource(srv.URL, nil, Options{}))
			if !exactly(tc.pods...)(u) {
				t.Errorf("got %s, want pods %v", describeFull(u), tc.pods)
			}
		})
	}
}

// conditionalServer honours If-None-Match (etag) or If-Modified-Since.
type conditionalServer struct {
	*httptest.Server
	mu          sync.Mutex
	body        string
	version     int
	modified    time.Time
	conditional atomic.Int32 // requests with a validator
	notModified atomic.Int32 // 304 answers
}

func newConditionalServer(t *testing.T, useETag bool, body string) *conditionalServer {
	c := &conditionalServer{body: body, version: 1, modified: time.Now().Add(-time.Hour).Truncate(time.Second)}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		body, etag, mod := c.body, fmt.Sprintf(`"v%d"`, c.version), c.modified
		c.mu.Unlock()
		inm, ims := r.Header.Get("If-None-Match"), r.Header.Get("If-Modified-Since")
		if inm != "" || ims != "" {
			c.conditional.Add(1)
		}
		if useETag {
			w.Header().Set("ETag", etag)
			if inm == etag {
				c.notModified.Add(1)
				w.WriteHeader(http.StatusNotModified)
				return
			}
		} else {
			w.Header().Set("Last-Modified", mod.UTC().Format(http.TimeFormat))
			if t, err := http.ParseTime(ims); err == nil && !mod.After(t) {
				c.notModified.Add(1)
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *conditionalServer) set(body string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.body = body
	c.version++
	c.modified = c.modified.Add(time.Minute)
}

func TestHTTPSourceConditionalGet(t *testing.T) {
	for _, useETag := range []bool{true, false} {
		name := "Last-Modified"
		if useETag {
			name = "ETag"
		}
		t.Run(name, func(t *testing.T) {
			srv := newConditionalServer(t, useETag, podManifest("a", "busybox"))
			updates := startSource(t, newTestHTTPSource(srv.URL, nil, Options{}))
			await(t, updates, 5*time.Second, "a", exactly("a"))
			// Unchanged: each 304 re-sends the last update (liveness).
			for range 3 {
				await(t, updates, 5*time.Second, "a again", exactly("a"))
			}
			if srv.conditional.Load() < 3 || srv.notModified.Load() < 3 {
				t.Errorf("conditional requests %d, 304s %d; want >= 3 each", srv.conditional.Load(), srv.notModified.Load())
			}
			srv.set(podManifest("b", "busybox"))
			await(t, updates, 5*time.Second, "b after change", exactly("b"))
			n := srv.notModified.Load()
			await(t, updates, 5*time.Second, "b again", exactly("b"))
			await(t, updates, 5*time.Second, "b again", exactly("b"))
			if srv.notModified.Load() <= n {
				t.Errorf("no 304 after the change")
			}
		})
	}
}

func TestHTTPSourceUnchangedBodyResent(t *testing.T) {
	srv := newManifestServer(t, podManifest("a", "busybox"))
	updates := startSource(t, newTestHTTPSource(srv.URL, nil, Options{}))
	first := await(t, updates, 5*time.Second, "a", exactly("a"))
	second := await(t, updates, 5*time.Second, "a again", exactly("a"))
	if first.Pods[0].Pod == second.Pods[0].Pod {
		t.Error("re-sent update shares its *v1.Pod with the previous one")
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.header.Get("If-None-Match") != "" || srv.header.Get("If-Modified-Since") != "" {
		t.Error("validators sent although the server gave none")
	}
}

func TestHTTPSourceReadErrors(t *testing.T) {
	t.Run("500", func(t *testing.T) {
		srv := newManifestServer(t, podManifest("a", "busybox"))
		updates := startSource(t, newTestHTTPSource(srv.URL, nil, Options{}))
		await(t, updates, 5*time.Second, "a", exactly("a"))
		srv.set("", http.StatusInternalServerError)
		u := await(t, updates, 5*time.Second, "500 error", failedWith("500 Internal Server Error"))
		if len(u.Pods) != 0 || len(u.Errors) != 0 {
			t.Errorf("error update carries pods or errors: %s", describeFull(u))
		}
		if !strings.Contains(u.Err.Error(), srv.URL) {
			t.Errorf("error %q does not name the URL", u.Err)
		}
		srv.set(podManifest("b", "busybox"), http.StatusOK)
		await(t, updates, 5*time.Second, "recovery", exactly("b"))
	})
	t.Run("404", func(t *testing.T) {
		srv := newManifestServer(t, "")
		srv.set("", http.StatusNotFound)
		await(t, startSource(t, newTestHTTPSource(srv.URL, nil, Options{})), 5*time.Second, "404 error", failedWith("404"))
	})
	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(release) })
		s := newTestHTTPSource(srv.URL, nil, Options{})
		s.Timeout = 50 * time.Millisecond
		start := time.Now()
		await(t, startSource(t, s), 5*time.Second, "timeout error", failedWith("timed out"))
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("timeout took %s", d)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String() + "/pods"
		ln.Close()
		await(t, startSource(t, newTestHTTPSource(url, nil, Options{})), 5*time.Second, "refused error", failedWith("refused"))
	})
}

func TestHTTPSourceTimeoutDefault(t *testing.T) {
	if got := NewHTTPSource("h", "http://x", time.Minute, nil, Options{}).timeout(); got != DefaultHTTPTimeout {
		t.Errorf("timeout %s", got)
	}
	if got := NewHTTPSource("h", "http://x", 2*time.Second, nil, Options{}).timeout(); got != 2*time.Second {
		t.Errorf("timeout with short interval %s", got)
	}
	if got := NewHTTPSource("h", "http://x", 0, nil, Options{}).interval; got != DefaultHTTPInterval {
		t.Errorf("default interval %s", got)
	}
}

func TestHTTPSourceGarbageKeepsPods(t *testing.T) {
	srv := newManifestServer(t, podManifest("a", "busybox"))
	updates := startSource(t, newTestHTTPSource(srv.URL, nil, Options{}))
	await(t, updates, 5*time.Second, "a", exactly("a"))
	srv.set("<html>\n  <body>oops: [</body>\n", http.StatusOK)
	u := await(t, updates, 5*time.Second, "origin error", func(u Update) bool { return len(u.Errors) > 0 })
	if u.Err != nil || len(u.Pods) != 0 {
		t.Errorf("garbage: %s", describeFull(u))
	}
	for _, e := range u.Errors {
		if e.PodKey != "" || e.Origin != srv.URL {
			t.Errorf("error %+v is not an origin-level error of %s", e, srv.URL)
		}
	}
	// A partly broken body: the good document updates, the broken one
	// fails the origin (so its old pods are kept).
	srv.set(podManifest("b", "busybox")+"---\nkind: [\n", http.StatusOK)
	u = await(t, updates, 5*time.Second, "b with origin error", func(u Update) bool { return hasPods("b")(u) && len(u.Errors) > 0 })
	if u.Errors[0].PodKey != "" {
		t.Errorf("error %+v", u.Errors[0])
	}
}

func TestHTTPSourceOversizedBody(t *testing.T) {
	big := podManifest("big", "busybox") + "# " + strings.Repeat("x", MaxManifestBytes) + "\n"
	srv := newManifestServer(t, podManifest("a", "busybox"))
	updates := startSource(t, newTestHTTPSource(srv.URL, nil, Options{}))
	await(t, updates, 5*time.Second, "a", exactly("a"))
	srv.set(big, http.StatusOK)
	u := await(t, updates, 5*time.Second, "size error", func(u Update) bool { return len(u.Errors) > 0 })
	if len(u.Pods) != 0 || u.Errors[0].PodKey != "" || !strings.Contains(u.Errors[0].Err, "larger than 10 MiB") {
		t.Errorf("oversized: %s", describeFull(u))
	}
	srv.set(podManifest("a", "busybox"), http.StatusOK)
	await(t, updates, 5*time.Second, "a again", exactly("a"))
}

func TestHTTPSourceHeaders(t *testing.T) {
	srv := newManifestServer(t, podManifest("a", "busybox"))
	headers := map[string]string{"Authorization": "Bearer s3cret", "X-Node": "n1", "Host": "pods.example"}
	await(t, startSource(t, newTestHTTPSource(srv.URL, headers, Options{})), 5*time.Second, "a", exactly("a"))
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.header.Get("Authorization") != "Bearer s3cret" || srv.header.Get("X-Node") != "n1" || srv.host != "pods.example" {
		t.Errorf("headers %v host %q", srv.header, srv.host)
	}
}

func TestHTTPSourceHostAccess(t *testing.T) {
	for _, tc := range hostAccessCases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newManifestServer(t, tc.manifest)
			u := <-startSource(t, newTestHTTPSource(srv.URL, nil, Options{}))
			if len(u.Pods) != 0 || len(u.Errors) != 1 {
				t.Fatalf("refused: %s", describeFull(u))
			}
			e := u.Errors[0]
			if e.Field != tc.field || !strings.Contains(e.Err, `violates PodSecurity "baseline"`) || e.PodKey == "" {
				t.Errorf("error %q, want field %s", e.Error(), tc.field)
			}
			u = <-startSource(t, newTestHTTPSource(srv.URL, nil, Options{Options: manifest.Options{Level: model.LevelPrivileged}}))
			if len(u.Pods) != 1 || len(u.Errors) != 0 {
				t.Errorf("allowed: %s", describeFull(u))
			}
		})
	}
}

func TestHTTPSourceStopsWhileSending(t *testing.T) {
	srv := newManifestServer(t, podManifest("a", "busybox"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- newTestHTTPSource(srv.URL, nil, Options{}).Run(ctx, make(chan Update)) }()
	waitBlockedIn(t, "send")
	cancel()
	runReturned(t, done, "Run blocked on a send after cancel")
}
