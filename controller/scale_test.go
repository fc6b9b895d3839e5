package controller

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berth-dev/berth/restarts"
	"github.com/berth-dev/berth/runtime/fake"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

type countingMetrics struct {
	noMetrics
	reconciles atomic.Int64
	started    atomic.Int64
}

func (m *countingMetrics) ReconcileDone(string, time.Duration) { m.reconciles.Add(1) }
func (m *countingMetrics) PodStarted(time.Duration)            { m.started.Add(1) }

// simResult is what one simulation measured.
type simResult struct {
	elapsed    time.Duration
	reconciles int64
	heap       uint64
	calls      map[string]int // runtime calls by method
}

// simRootDir is a root_dir on tmpfs (/dev/shm) when there is one: each
// container's termination-log file is real file work, and on this shared
// disk its mkdirs would make the benchmark measure the disk, not the
// controller.
func simRootDir(tb testing.TB) string {
	d, err := os.MkdirTemp("/dev/shm", "berth-sim")
	if err != nil {
		return tb.TempDir()
	}
	tb.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

// simulate runs n two-container pods through the store, the workqueue and
// the controller on the in-memory runtime until all run.
func simulate(tb testing.TB, n, workers int) simResult {
	q := NewQueue(nil, nil)
	st, err := store.New(q.Add)
	if err != nil {
		tb.Fatal(err)
	}
	rt := fake.New(nil)
	rt.AddImage("app:1")
	m := &countingMetrics{}
	ctrl := New(Config{Node: "sim", RootDir: simRootDir(tb), Workers: workers, PauseImage: "pause", PauseBuild: testPauseBuild(),
		Backoff: restarts.Backoff{Initial: time.Second, Max: time.Minute}, Metrics: m}, st, rt, q)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { ctrl.Run(ctx); close(done) }()
	_ = st.UpsertSource(&model.Source{Name: "file", Synced: true})

	pods := make([]*model.Pod, n)
	for i := range pods {
		name := fmt.Sprintf("pod-%05d", i)
		pods[i] = &model.Pod{Key: "default/" + name, Source: "file", Origin: name + ".yaml", SeenAt: time.Now(), Spec: &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(fmt.Sprintf("%08d-0000-0000-0000-000000000000", i))},
			Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{
				{Name: "app", Image: "app:1", ImagePullPolicy: v1.PullIfNotPresent, Env: []v1.EnvVar{{Name: "I", Value: name}}},
				{Name: "side", Image: "app:1", ImagePullPolicy: v1.PullIfNotPresent},
			}},
		}}
	}
	start := time.Now()
	if err := st.ReplaceSourcePods("file", pods); err != nil {
		tb.Fatal(err)
	}
	for m.started.Load() < int64(n) {
		if time.Since(start) > 5*time.Minute {
			tb.Fatalf("only %d of %d pods started", m.started.Load(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	// Let the queue drain the notifications of the last writes.
	drained := time.Now().Add(time.Minute)
	for ctrl.queue.Len() > 0 {
		if time.Now().After(drained) {
			tb.Fatalf("the queue still holds %d keys a minute after all pods started", ctrl.queue.Len())
		}
		time.Sleep(time.Millisecond)
	}
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	cancel()
	<-done
	calls := map[string]int{}
	for _, k := range []string{"CreateContainer", "StartContainer", "InspectContainer", "InspectImage", "ListContainers", "StopContainer", "RemoveContainer", "BuildImageData", "PullImage"} {
		calls[k] = rt.CallCount(k)
	}
	return simResult{elapsed: elapsed, reconciles: m.reconciles.Load(), heap: ms.HeapAlloc, calls: calls}
}

func (r simResult) callsPerPod(n int) float64 {
	t := 0
	for _, v := range r.calls {
		t += v
	}
	return float64(t) / float64(n)
}

// BenchmarkControllerScale: 10 000 pods (30 000 containers with sandboxes)
// from one source update to all running, on the in-memory runtime.
//
//	go test -run '^$' -bench ControllerScale -benchtime 1x ./controller/
func BenchmarkControllerScale(b *testing.B) {
	for i := 0; i < b.N; i++ {
		r := simulate(b, 10000, 4)
		b.ReportMetric(10000/r.elapsed.Seconds(), "pods/s")
		b.ReportMetric(float64(r.reconciles)/r.elapsed.Seconds(), "reconciles/s")
		b.ReportMetric(float64(r.reconciles)/10000, "reconciles/pod")
		b.ReportMetric(float64(r.heap)/(1<<20), "heap-MiB")
		b.ReportMetric(r.callsPerPod(10000), "runtime-calls/pod")
	}
}

// TestSimulationConverges is the small, always-run version of the scale run.
// A pod start costs only what it needs of the engine: create and start of
// each container, and one inspect of the sandbox (its IP); image checks are
// once per image.
func TestSimulationConverges(t *testing.T) {
	const n = 300
	r := simulate(t, n, 4)
	if r.reconciles < n {
		t.Fatalf("%d reconciles for %d pods", r.reconciles, n)
	}
	want := map[string]int{"CreateContainer": 3 * n, "StartContainer": 3 * n, "InspectContainer": n,
		"BuildImageData": 1, "ListContainers": 0, "StopContainer": 0, "RemoveContainer": 0, "PullImage": 0}
	for k, w := range want {
		if r.calls[k] != w {
			t.Errorf("%s called %d times for %d pods, want %d", k, r.calls[k], n, w)
		}
	}
	// The pause image and app:1, the latter looked up by at most every
	// worker at once before its ID is cached.
	if got := r.calls["InspectImage"]; got < 2 || got > 1+4 {
		t.Errorf("ImageID called %d times for 2 images and 4 workers", got)
	}
	t.Logf("%.2f runtime calls per pod of 3 containers, %.2f reconciles per pod", r.callsPerPod(n), float64(r.reconciles)/n)
}
