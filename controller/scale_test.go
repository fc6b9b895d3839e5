package controller

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

type countingMetrics struct {
	noMetrics
	reconciles atomic.Int64
	started    atomic.Int64
}

func (m *countingMetrics) ReconcileDone(string, time.Duration) { m.reconciles.Add(1) }
func (m *countingMetrics) PodStarted(time.Duration)            { m.started.Add(1) }

// simulate runs n two-container pods through the store, the workqueue and
// the controller on the in-memory runtime until all run.
func simulate(tb testing.TB, n, workers int) (elapsed time.Duration, reconciles int64, heap uint64) {
	st, err := store.New(nil)
	if err != nil {
		tb.Fatal(err)
	}
	rt := runtime.NewFake(nil)
	rt.AddImage("app:1")
	m := &countingMetrics{}
	ctrl := New(Config{Node: "sim", RootDir: tb.TempDir(), Workers: workers, PauseImage: "pause", PauseBinary: "/berth",
		Backoff: Backoff{Initial: time.Second, Max: time.Minute}, Metrics: m}, st, rt)
	st.SetNotifier(ctrl.Enqueue)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { ctrl.Run(ctx); close(done) }()
	_ = st.UpsertSource(&store.Source{Name: "file", Synced: true})

	pods := make([]*store.Pod, n)
	for i := range pods {
		name := fmt.Sprintf("pod-%05d", i)
		pods[i] = &store.Pod{Key: "default/" + name, Source: "file", Origin: name + ".yaml", SeenAt: time.Now(), Spec: &v1.Pod{
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
	elapsed = time.Since(start)
	// Let the queue drain the notifications of the last writes.
	for ctrl.queue.Len() > 0 {
		time.Sleep(time.Millisecond)
	}
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	cancel()
	<-done
	return elapsed, m.reconciles.Load(), ms.HeapAlloc
}

// BenchmarkControllerScale: 10 000 pods (30 000 containers with sandboxes)
// from one source update to all running, on the in-memory runtime.
//
//	go test -run '^$' -bench ControllerScale -benchtime 1x ./controller/
func BenchmarkControllerScale(b *testing.B) {
	for i := 0; i < b.N; i++ {
		elapsed, reconciles, heap := simulate(b, 10000, 4)
		b.ReportMetric(10000/elapsed.Seconds(), "pods/s")
		b.ReportMetric(float64(reconciles)/elapsed.Seconds(), "reconciles/s")
		b.ReportMetric(float64(reconciles)/10000, "reconciles/pod")
		b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
	}
}

// TestSimulationConverges is the small, always-run version of the scale run.
func TestSimulationConverges(t *testing.T) {
	_, reconciles, _ := simulate(t, 300, 4)
	if reconciles < 300 {
		t.Fatalf("%d reconciles for 300 pods", reconciles)
	}
}
