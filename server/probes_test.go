package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/metrics"
	"github.com/berth-dev/berth/prober"
	"github.com/berth-dev/berth/store"
)

func TestProbeMetricsEndpoint(t *testing.T) {
	m := metrics.New()
	p := prober.Probe{Kind: prober.Readiness, Container: "web", Pod: "cart", Namespace: "shop", PodUID: "u1"}
	m.ProbeResult(p, prober.Failure, time.Millisecond)
	st, _ := store.New(nil)
	s := New(Options{Store: st, Registry: m.Registry, Tokens: []string{"tok"}})
	RegisterProbes(s, m.ProbeRegistry)
	hs := httptest.NewServer(s)
	defer hs.Close()
	if code, _, _ := fetch(t, hs.URL+"/metrics/probes", ""); code != http.StatusUnauthorized {
		t.Fatalf("/metrics/probes without token = %d, want 401", code)
	}
	series := `prober_probe_total{container="web",namespace="shop",pod="cart",pod_uid="u1",probe_type="Readiness",result="failed"} 1`
	code, _, body := fetch(t, hs.URL+"/metrics/probes", "tok")
	if code != http.StatusOK || !strings.Contains(body, series+"\n") || strings.Contains(body, "go_goroutines") {
		t.Fatalf("/metrics/probes = %d\n%s", code, body)
	}
	if _, _, body := fetch(t, hs.URL+"/metrics", ""); strings.Contains(body, "prober_probe_total") {
		t.Fatal("per-container prober series on /metrics")
	}
	m.ProbeStopped(p)
	if _, _, body := fetch(t, hs.URL+"/metrics/probes", "tok"); strings.Contains(body, "prober_probe_total{") {
		t.Fatalf("series left after the worker stopped:\n%s", body)
	}
}
