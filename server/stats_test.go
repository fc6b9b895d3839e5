package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/berth-dev/berth/stats"
	"github.com/berth-dev/berth/store"
)

// fakeStats is a Provider answering canned values.
type fakeStats struct {
	summary   *stats.Summary
	err       error
	collector prometheus.Collector
}

func (f *fakeStats) Summary(context.Context) (*stats.Summary, error) { return f.summary, f.err }
func (f *fakeStats) MachineInfo(context.Context) (any, error) {
	if f.err != nil {
		return nil, f.err
	}
	return map[string]int{"num_cores": 4}, nil
}
func (f *fakeStats) Collector() prometheus.Collector { return f.collector }
func (f *fakeStats) Start(context.Context) error     { return nil }

func statsServer(t *testing.T, p stats.Provider, tokens ...string) *httptest.Server {
	t.Helper()
	st, err := store.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Store: st, Tokens: tokens})
	RegisterStats(s, p)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs
}

func fetch(t *testing.T, url, token string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

func TestStatsUnavailable(t *testing.T) {
	for _, p := range []stats.Provider{stats.Unavailable{Reason: "cgroups not mounted"}, nil} {
		hs := statsServer(t, p)
		want := "cgroups not mounted"
		if p == nil {
			want = "not configured"
		}
		for _, path := range []string{"/stats/summary", "/spec", "/metrics/cadvisor"} {
			code, _, body := fetch(t, hs.URL+path, "")
			if code != http.StatusServiceUnavailable || !strings.Contains(body, want) ||
				!strings.Contains(body, stats.ErrUnavailable.Error()) {
				t.Errorf("%s (provider %v) = %d %q, want 503 with %q", path, p, code, body, want)
			}
		}
	}
}

func TestStatsErrors(t *testing.T) {
	hs := statsServer(t, &fakeStats{err: errors.New("boom")})
	if code, _, body := fetch(t, hs.URL+"/stats/summary", ""); code != http.StatusInternalServerError || !strings.Contains(body, "boom") {
		t.Errorf("summary = %d %q, want 500 boom", code, body)
	}
	hs = statsServer(t, &fakeStats{err: errors.Join(stats.ErrUnavailable, errors.New("not started"))})
	if code, _, body := fetch(t, hs.URL+"/spec", ""); code != http.StatusServiceUnavailable || !strings.Contains(body, "not started") {
		t.Errorf("spec = %d %q, want 503", code, body)
	}
}

func TestStatsOK(t *testing.T) {
	v := uint64(4096)
	sum := &stats.Summary{
		Node: stats.NodeStats{NodeName: "n1", Memory: &stats.MemoryStats{WorkingSetBytes: &v}},
		Pods: []stats.PodStats{{
			PodRef:     stats.PodReference{Name: "web", Namespace: "default", UID: "u1"},
			Containers: []stats.ContainerStats{{Name: "nginx", Memory: &stats.MemoryStats{WorkingSetBytes: &v}}},
		}},
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "container_fake_bytes", Help: "fake"})
	g.Set(7)
	hs := statsServer(t, &fakeStats{summary: sum, collector: g}, "tok")

	for _, path := range []string{"/stats/summary", "/spec", "/metrics/cadvisor"} {
		if code, _, _ := fetch(t, hs.URL+path, ""); code != http.StatusUnauthorized {
			t.Errorf("%s without token = %d, want 401", path, code)
		}
	}

	code, ct, body := fetch(t, hs.URL+"/stats/summary", "tok")
	if code != http.StatusOK || !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("summary = %d %s %q", code, ct, body)
	}
	var got stats.Summary
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if got.Node.NodeName != "n1" || len(got.Pods) != 1 || got.Pods[0].PodRef.UID != "u1" ||
		*got.Pods[0].Containers[0].Memory.WorkingSetBytes != 4096 {
		t.Errorf("summary = %s", body)
	}
	if !strings.Contains(body, `"workingSetBytes": 4096`) || !strings.Contains(body, `"podRef": {`) {
		t.Errorf("summary JSON field names differ from the kubelet's: %s", body)
	}

	if code, _, body := fetch(t, hs.URL+"/spec", "tok"); code != http.StatusOK || !strings.Contains(body, `"num_cores": 4`) {
		t.Errorf("spec = %d %q", code, body)
	}
	if code, _, body := fetch(t, hs.URL+"/metrics/cadvisor", "tok"); code != http.StatusOK || !strings.Contains(body, "container_fake_bytes 7") {
		t.Errorf("metrics/cadvisor = %d %q", code, body)
	}
	// The cAdvisor metrics are not mixed into /metrics (no registry here).
	if code, _, _ := fetch(t, hs.URL+"/metrics", ""); code != http.StatusNotFound {
		t.Errorf("/metrics = %d, want 404 without a registry", code)
	}
}
