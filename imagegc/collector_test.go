package imagegc

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/runtime/fake"
)

// TestRunCollectsAtStartAndEveryPeriod: the first collection runs at once,
// the next after Period on the injected clock; ctx's end stops Run.
func TestRunCollectsAtStartAndEveryPeriod(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt := fake.New(clk.Now)
	rt.SetImage("old:1", clk.Now().Add(-time.Hour), 100, nil)
	rt.SetImage("pause:1", clk.Now().Add(-2*time.Hour), 100, nil)
	c := New(Config{
		Policy: Policy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: MinAge},
		Disk:   func(context.Context) (Usage, error) { return Usage{Capacity: 1000, Available: 0}, nil },
		Keep:   func() []string { return []string{"pause:1"} },
		Clock:  clk, Metrics: &recorder{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, rt)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	testutil.WaitFor(t, 10*time.Second, "the first collection", func() bool { return rt.CallCount("ListImages") == 1 && clk.HasWaiters() })
	if rt.CallCount("RemoveImage") != 0 {
		t.Fatal("an image first seen now was removed")
	}
	clk.Step(Period)
	testutil.WaitFor(t, 10*time.Second, "the second collection", func() bool { return rt.CallCount("ListImages") == 2 && clk.HasWaiters() })
	list, _ := rt.ListImages(t.Context())
	if len(list) != 1 || list[0].RepoTags[0] != "pause:1" {
		t.Errorf("images after the second collection: %+v, want only pause:1", list)
	}
	cancel()
	<-done
}

func TestPodImages(t *testing.T) {
	pod := func(images ...string) *model.Pod {
		p := &v1.Pod{}
		p.Spec.InitContainers = []v1.Container{{Image: images[0]}}
		p.Spec.Containers = []v1.Container{{Image: images[1]}}
		p.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Image: images[2]}}}
		return &model.Pod{Spec: p}
	}
	got := PodImages([]*model.Pod{pod("init:1", "app:1", "debug:1"), pod("init:1", "app:2", ""), {}})
	want := []string{"app:1", "app:2", "debug:1", "init:1"}
	if len(got) != len(want) {
		t.Fatalf("PodImages = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("PodImages = %v, want %v", got, want)
		}
	}
}

// TestStatfsAndEngineDir: the disk of a directory is read; a directory
// without the engine's containers/ is refused with how to fix it.
func TestStatfsAndEngineDir(t *testing.T) {
	u, err := Statfs(t.TempDir())(t.Context())
	if err != nil || u.Capacity <= 0 || u.Available < 0 || u.Available > u.Capacity {
		t.Errorf("Statfs = %+v, %v", u, err)
	}
	if _, err := EngineDir(t.TempDir()); err == nil {
		t.Error("EngineDir accepted a directory without containers/")
	}
	if _, err := EngineDir("relative"); err == nil {
		t.Error("EngineDir accepted a relative path")
	}
	if testing.Short() {
		return
	}
	d := dockerEngine(t)
	root, err := d.RootDir(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	dir, err := EngineDir(root)
	if err != nil {
		t.Fatalf("EngineDir(%s): %v", root, err)
	}
	if u, err := Statfs(dir)(t.Context()); err != nil || u.Capacity <= 0 {
		t.Errorf("Statfs(%s) = %+v, %v", dir, u, err)
	}
}

var _ Engine = runtime.Runtime(nil)
