package prober

import (
	"context"
	"testing"
	"time"

	"github.com/berth-dev/berth/runtime/fake"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/runtime"
)

func (e *env) live(p Probe) int {
	e.m.mu.Lock()
	defer e.m.mu.Unlock()
	return e.m.live[p]
}

func execProbe() *v1.Probe {
	return &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"/check"}}},
		PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 1, SuccessThreshold: 1}
}

// running adds a running container to rt and returns its ID.
func running(t *testing.T, rt *fake.Runtime, name string) string {
	t.Helper()
	ctx := context.Background()
	id, err := rt.CreateContainer(ctx, &runtime.ContainerConfig{Name: name, Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestResultsCountedPerContainerAndDroppedWhenWorkerStops(t *testing.T) {
	rt := fake.New(nil)
	rt.AddImage("img")
	web, side := running(t, rt, "web"), running(t, rt, "side")
	e := newEnv(t, rt)
	// /check fails in side only.
	rt.ExecFunc = func(id string, _ []string) (int, []byte, error) {
		if id == side {
			return 1, nil, nil
		}
		return 0, nil, nil
	}
	webSpec := &v1.Container{Name: "web", LivenessProbe: execProbe(), ReadinessProbe: execProbe()}
	sideSpec := &v1.Container{Name: "side", LivenessProbe: execProbe()}
	both := []Probed{
		{Target: Target{ContainerID: web, Spec: webSpec}, StartedAt: e.clk.Now(), PodUID: "uid-1"},
		{Target: Target{ContainerID: side, Spec: sideSpec}, StartedAt: e.clk.Now(), PodUID: "uid-1"},
	}
	e.m.Sync("shop/cart", both)
	webLive := Probe{Kind: Liveness, Container: "web", Pod: "cart", Namespace: "shop", PodUID: "uid-1"}
	webReady := Probe{Kind: Readiness, Container: "web", Pod: "cart", Namespace: "shop", PodUID: "uid-1"}
	sideLive := Probe{Kind: Liveness, Container: "side", Pod: "cart", Namespace: "shop", PodUID: "uid-1"}
	testutil.WaitFor(t, 5*time.Second, "first results", func() bool {
		return e.metrics.results(webLive, Success) == 1 && e.metrics.results(webReady, Success) == 1 &&
			e.metrics.results(sideLive, Failure) == 1
	})
	e.tick(t, 10*time.Second)
	testutil.WaitFor(t, 5*time.Second, "second results", func() bool {
		return e.metrics.results(webLive, Success) == 2 && e.metrics.results(sideLive, Failure) == 2
	})
	if n := e.metrics.results(webLive, Failure) + e.metrics.results(sideLive, Success); n != 0 {
		t.Fatalf("%d results counted for the wrong container", n)
	}

	// side goes away: its series are dropped, web's stay.
	e.m.Sync("shop/cart", both[:1])
	testutil.WaitFor(t, 5*time.Second, "side's series dropped", func() bool { return e.metrics.stops(sideLive) == 1 })
	if e.metrics.stops(webLive)+e.metrics.stops(webReady) != 0 {
		t.Fatal("web's series dropped while web is probed")
	}
	e.m.Sync("shop/cart", nil)
	testutil.WaitFor(t, 5*time.Second, "web's series dropped", func() bool { return e.metrics.stops(webLive) == 1 && e.metrics.stops(webReady) == 1 })
}

func TestProbeDurationOnTheProberClock(t *testing.T) {
	rt := fake.New(nil)
	rt.AddImage("img")
	id := running(t, rt, "web")
	e := newEnv(t, rt)
	// Each run takes 250ms on the fake clock.
	rt.ExecFunc = func(string, []string) (int, []byte, error) {
		e.clk.Step(250 * time.Millisecond)
		return 0, nil, nil
	}
	spec := &v1.Container{Name: "web", LivenessProbe: execProbe()}
	p := Probe{Kind: Liveness, Container: "web", Pod: "cart", Namespace: "shop", PodUID: "u"}
	e.m.Sync("shop/cart", []Probed{{Target: Target{ContainerID: id, Spec: spec}, PodUID: "u", StartedAt: e.clk.Now()}})
	testutil.WaitFor(t, 5*time.Second, "a result", func() bool { return e.metrics.results(p, Success) == 1 })
	e.metrics.mu.Lock()
	defer e.metrics.mu.Unlock()
	if len(e.metrics.took) != 1 || e.metrics.took[0] != 250*time.Millisecond {
		t.Fatalf("probe durations %v on the fake clock, want [250ms]", e.metrics.took)
	}
}

func TestRestartedContainerKeepsItsSeries(t *testing.T) {
	rt := fake.New(nil)
	rt.AddImage("img")
	first, second := running(t, rt, "web-1"), running(t, rt, "web-2")
	e := newEnv(t, rt)
	spec := &v1.Container{Name: "web", LivenessProbe: execProbe()}
	p := Probe{Kind: Liveness, Container: "web", Pod: "cart", Namespace: "shop", PodUID: "u"}
	e.m.Sync("shop/cart", []Probed{{Target: Target{ContainerID: first, Spec: spec}, PodUID: "u", StartedAt: e.clk.Now()}})
	testutil.WaitFor(t, 5*time.Second, "first instance probed", func() bool { return e.metrics.results(p, Success) == 1 })
	// The new instance's worker starts before the old one has ended.
	e.m.Sync("shop/cart", []Probed{{Target: Target{ContainerID: second, Spec: spec}, PodUID: "u", StartedAt: e.clk.Now()}})
	testutil.WaitFor(t, 5*time.Second, "old worker ended", func() bool { return e.live(p) == 1 })
	if n := e.metrics.stops(p); n != 0 {
		t.Fatalf("series dropped %d times while the new instance is probed", n)
	}
	e.m.Sync("shop/cart", nil)
	testutil.WaitFor(t, 5*time.Second, "series dropped", func() bool { return e.metrics.stops(p) == 1 && e.live(p) == 0 })
}

func TestVanishedContainerIsUnknownNotFailed(t *testing.T) {
	rt := fake.New(nil)
	e := newEnv(t, rt)
	spec := &v1.Container{Name: "web", LivenessProbe: execProbe()}
	p := Probe{Kind: Liveness, Container: "web", Pod: "cart", Namespace: "shop", PodUID: "u"}
	// "gone" is no container of the engine: exec reports ErrNotFound.
	e.m.Sync("shop/cart", []Probed{{Target: Target{ContainerID: "gone", Spec: spec}, PodUID: "u", StartedAt: e.clk.Now()}})
	for i := 1; i <= 3; i++ {
		testutil.WaitFor(t, 5*time.Second, "unknown result", func() bool { return e.metrics.results(p, Unknown) == i })
		e.tick(t, 10*time.Second)
	}
	if e.metrics.results(p, Failure) != 0 || e.m.Result("gone", Liveness) != Success {
		t.Fatalf("a vanished container counted as failed (verdict %v)", e.m.Result("gone", Liveness))
	}
}

func TestSucceededStartupProbeKeepsSeriesUntilStopped(t *testing.T) {
	rt := fake.New(nil)
	rt.AddImage("img")
	id := running(t, rt, "web")
	e := newEnv(t, rt)
	spec := &v1.Container{Name: "web", StartupProbe: execProbe()}
	p := Probe{Kind: Startup, Container: "web", Pod: "cart", Namespace: "shop", PodUID: "u"}
	e.m.Sync("shop/cart", []Probed{{Target: Target{ContainerID: id, Spec: spec}, PodUID: "u", StartedAt: e.clk.Now()}})
	e.waitResult(t, id, Startup, Success)
	if e.live(p) != 1 || e.metrics.stops(p) != 0 {
		t.Fatal("a succeeded startup probe dropped its series while its container runs")
	}
	e.m.Sync("shop/cart", nil)
	testutil.WaitFor(t, 5*time.Second, "series dropped", func() bool { return e.metrics.stops(p) == 1 })
}
