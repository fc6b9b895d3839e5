package metrics

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/runtime/fake"

	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/prober"
	"github.com/berth-dev/berth/runtime"
)

func TestProbeSeriesAsTheKubelet(t *testing.T) {
	m := New()
	p := prober.Probe{Kind: prober.Liveness, Container: "web", Pod: "cart", Namespace: "shop", PodUID: "u1"}
	m.ProbeResult(p, prober.Success, 2*time.Millisecond)
	m.ProbeResult(p, prober.Success, 3*time.Millisecond)
	m.ProbeResult(p, prober.Failure, time.Second)
	m.ProbeResult(p, prober.Unknown, time.Millisecond)
	want := `
# HELP prober_probe_total Cumulative number of a liveness, readiness or startup probe for a container by result.
# TYPE prober_probe_total counter
prober_probe_total{container="web",namespace="shop",pod="cart",pod_uid="u1",probe_type="Liveness",result="failed"} 1
prober_probe_total{container="web",namespace="shop",pod="cart",pod_uid="u1",probe_type="Liveness",result="successful"} 2
prober_probe_total{container="web",namespace="shop",pod="cart",pod_uid="u1",probe_type="Liveness",result="unknown"} 1
`
	if err := testutil.GatherAndCompare(m.ProbeRegistry, strings.NewReader(want), "prober_probe_total"); err != nil {
		t.Fatal(err)
	}
	// The duration counts successful and unknown runs, as the kubelet's.
	mfs, err := m.ProbeRegistry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var count uint64
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() == "prober_probe_duration_seconds" {
			h := mf.GetMetric()[0].GetHistogram()
			count, sum = h.GetSampleCount(), h.GetSampleSum()
		}
	}
	if count != 3 || sum < 0.0059 || sum > 0.0061 {
		t.Fatalf("prober_probe_duration_seconds count %d sum %v, want 3 and 0.006", count, sum)
	}
	// The per-container series stay off berth's own registry.
	if n, err := testutil.GatherAndCount(m.Registry, "prober_probe_total"); err != nil || n != 0 {
		t.Fatalf("prober_probe_total on /metrics: %d %v", n, err)
	}
	if v := testutil.ToFloat64(m.probeResults.WithLabelValues("liveness", "success")); v != 2 {
		t.Fatalf("berth_probe_results_total success %v", v)
	}

	m.ProbeStopped(p)
	if n, err := testutil.GatherAndCount(m.ProbeRegistry); err != nil || n != 0 {
		t.Fatalf("%d series left after ProbeStopped (%v)", n, err)
	}
}

// TestProberManagerFeedsProbeSeries runs the real prober manager against a
// fake engine on a fake clock, counting into Metrics.
func TestProberManagerFeedsProbeSeries(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rt := fake.New(nil)
	rt.AddImage("img")
	id, err := rt.CreateContainer(ctx, &runtime.ContainerConfig{Name: "web", Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Now())
	m := New()
	pm := prober.NewManager(ctx, prober.NewExecutor(rt), clk, func(string) {}, m)
	probe := &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"/check"}}}, PeriodSeconds: 5}
	pm.Sync("shop/cart", []prober.Probed{{Target: prober.Target{ContainerID: id,
		Spec: &v1.Container{Name: "web", ReadinessProbe: probe}}, StartedAt: clk.Now(), PodUID: "u1"}})

	key := "Readiness/successful/web/cart/shop/u1"
	wait := func(what string, cond func(map[string]float64) bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			got := probeTotals(t, m)
			if cond(got) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; prober_probe_total: %v", what, got)
			}
			time.Sleep(time.Millisecond)
		}
	}
	wait("the first result", func(s map[string]float64) bool { return s[key] == 1 })
	for deadline := time.Now().Add(5 * time.Second); !clk.HasWaiters(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no probe worker waiting on the clock")
		}
	}
	clk.Step(5 * time.Second)
	wait("the second result", func(s map[string]float64) bool { return s[key] == 2 && len(s) == 1 })
	pm.Sync("shop/cart", nil)
	wait("the series to go", func(s map[string]float64) bool { return len(s) == 0 })
}

// probeTotals gathers prober_probe_total keyed by
// probe_type/result/container/pod/namespace/pod_uid.
func probeTotals(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	mfs, err := m.ProbeRegistry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "prober_probe_total" {
			continue
		}
		for _, s := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range s.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			out[strings.Join([]string{l["probe_type"], l["result"], l["container"], l["pod"], l["namespace"], l["pod_uid"]}, "/")] = s.GetCounter().GetValue()
		}
	}
	return out
}
