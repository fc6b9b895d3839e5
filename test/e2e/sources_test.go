package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// podServer serves a mutable manifest body, or a status code.
type podServer struct {
	mu   sync.Mutex
	body string
	code int
}

func (s *podServer) set(code int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.code, s.body = code, body
}

func (s *podServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.WriteHeader(s.code)
	io.WriteString(w, s.body)
}

func sleeper(name string) string {
	return podYAML(name, Ctr{Name: "app", Args: []string{"sleep"}})
}

func metricAtLeast(tb testing.TB, b *Berth, series string, min float64) {
	tb.Helper()
	waitFor(tb, waitLong, series+" >= "+fmt.Sprint(min), func() (bool, string) {
		text, err := b.Metrics()
		if err != nil {
			return false, err.Error()
		}
		v, _ := metricValue(text, series)
		return v >= min, fmt.Sprint(v)
	})
}

// request sends method url with body and a bearer token (none if empty)
// and fails unless the answer is want.
func request(tb testing.TB, method, url, token, body string, want int) {
	tb.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		tb.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, b, want)
	}
}

// TestAllSourcesMerge runs pods from the file, etcd, HTTP and push sources
// side by side: each reaches Docker, the same pod key from a second source
// is rejected, an HTTP failure keeps that source's pods, and deletions in
// each source remove their pods. Events land in etcd.
func TestAllSourcesMerge(t *testing.T) {
	etcd := startEtcd(t)
	web := &podServer{}
	web.set(200, sleeper("fromhttp"))
	hs := httptest.NewServer(web)
	defer hs.Close()
	node := "e2e-" + runID + "-" + randHex(3)
	prefix := "/registry/hosts/" + node + "/pods/"
	etcd.Put(prefix+"default/frometcd", sleeper("frometcd"))
	pushFile, push := writeToken(t, "push")

	b := startBerth(t, Options{Node: node, Env: []string{
		"BERTH_SOURCES_ETCD_ENDPOINTS=" + etcd.ClientURL,
		"BERTH_SOURCES_HTTP_URL=" + hs.URL,
		"BERTH_SOURCES_HTTP_INTERVAL=300ms",
		"BERTH_SOURCES_PUSH_ENABLED=true",
		"BERTH_SOURCES_PUSH_TOKEN_FILE=" + pushFile,
	}})
	writeFile(t, b.Pods, "fromfile.yaml", sleeper("fromfile"))
	request(t, http.MethodPost, b.URL("/pods/default/pushed"), push, sleeper("pushed"), http.StatusCreated)

	ids := map[string]map[string]string{}
	for _, pod := range []string{"fromfile", "frometcd", "fromhttp", "pushed"} {
		ids[pod] = waitPodRunning(t, node, pod, "app")
	}
	for pod, source := range map[string]string{"fromfile": "file", "frometcd": "etcd", "fromhttp": "http", "pushed": "push"} {
		p, err := b.Pod(pod)
		if err != nil || p.Annotations["berth.io/source"] != source {
			t.Fatalf("pod %s: source %q (%v), want %s", pod, p.Annotations["berth.io/source"], err, source)
		}
	}

	// The same pod key from etcd: the file source keeps it.
	etcd.Put(prefix+"default/fromfile", podYAML("fromfile", Ctr{Name: "other", Args: []string{"sleep"}}))
	metricAtLeast(t, b, `berth_manifest_errors_total{source="etcd"}`, 1)
	if p, _ := b.Pod("fromfile"); p.Annotations["berth.io/source"] != "file" {
		t.Fatal("the second source took the pod over")
	}
	assertStable(t, node, "fromfile", ids["fromfile"], time.Second)

	// An HTTP source failing keeps its pods.
	web.set(http.StatusInternalServerError, "boom")
	metricAtLeast(t, b, `berth_source_errors_total{source="http"}`, 2)
	assertStable(t, node, "fromhttp", ids["fromhttp"], time.Second)
	web.set(200, "")
	waitPodGone(t, node, "fromhttp")

	etcd.Delete(prefix + "default/frometcd")
	waitPodGone(t, node, "frometcd")
	request(t, http.MethodDelete, b.URL("/pods/default/pushed"), push, "", http.StatusOK)
	waitPodGone(t, node, "pushed")
	assertStable(t, node, "fromfile", ids["fromfile"], time.Second)

	if n := etcd.Count("/events/default/frometcd/"); n < 2 {
		t.Errorf("%d events of frometcd in etcd, want at least created and started", n)
	}
}

// TestRestartWithSourceDownDeletesNothing: berth restarts while etcd is
// down. Until etcd answers, its pods must keep running untouched, even after
// the file source synced and the controller resynced; /readyz says why it is
// not ready. When etcd returns, nothing is recreated.
func TestRestartWithSourceDownDeletesNothing(t *testing.T) {
	etcd := startEtcd(t)
	node := "e2e-" + runID + "-" + randHex(3)
	etcd.Put("/registry/hosts/"+node+"/pods/default/frometcd", sleeper("frometcd"))
	b := startBerth(t, Options{Node: node, ReadyPath: "/healthz", Env: []string{
		"BERTH_SOURCES_ETCD_ENDPOINTS=" + etcd.ClientURL,
	}})
	writeFile(t, b.Pods, "fromfile.yaml", sleeper("fromfile"))
	fromEtcd := waitPodRunning(t, node, "frometcd", "app")
	fromFile := waitPodRunning(t, node, "fromfile", "app")

	b.Kill(t)
	etcd.Stop()
	b.Start(t)
	metricAtLeast(t, b, `berth_source_updates_total{source="file"}`, 1)
	// Longer than the controller's resync (5 s in these tests).
	assertStable(t, node, "frometcd", fromEtcd, 7*time.Second)
	assertStable(t, node, "fromfile", fromFile, time.Second)
	resp, err := http.Get(b.URL("/readyz"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "etcd") {
		t.Fatalf("/readyz with etcd down: %d %s", resp.StatusCode, body)
	}

	etcd.Start()
	waitFor(t, waitLong, "/readyz once etcd is back", func() (bool, string) {
		resp, err := http.Get(b.URL("/readyz"))
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == 200, resp.Status
	})
	assertStable(t, node, "frometcd", fromEtcd, 2*time.Second)
}
