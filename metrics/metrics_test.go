package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

func TestStateAndQueueSeries(t *testing.T) {
	m := New()
	st, _ := store.New(nil)
	_ = st.UpsertPod(&model.Pod{Key: "default/a", Spec: &v1.Pod{}, Status: v1.PodStatus{Phase: v1.PodRunning}})
	_ = st.UpsertPod(&model.Pod{Key: "default/b", Spec: &v1.Pod{}})
	_, _ = st.UpsertContainer(&model.Container{ID: "1", PodKey: "default/a", State: model.StateRunning})
	_, _ = st.UpsertContainer(&model.Container{ID: "2", PodKey: "default/a", State: model.StateExited})
	m.RegisterState(st)
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "pods", MetricsProvider: m.WorkqueueProvider()})
	defer q.ShutDown()
	q.Add("default/a")
	q.Add("default/b")
	m.ReconcileDone("success", 3*time.Millisecond)
	m.SourceUpdate("file", time.Unix(100, 0))

	want := `
# HELP berth_pods Desired pods, by phase.
# TYPE berth_pods gauge
berth_pods{phase="Failed"} 0
berth_pods{phase="Pending"} 1
berth_pods{phase="Running"} 1
berth_pods{phase="Succeeded"} 0
# HELP workqueue_adds_total Total number of adds handled by workqueue.
# TYPE workqueue_adds_total counter
workqueue_adds_total{name="pods"} 2
# HELP berth_source_last_sync_timestamp_seconds Unix time of the last complete update from a source.
# TYPE berth_source_last_sync_timestamp_seconds gauge
berth_source_last_sync_timestamp_seconds{source="file"} 100
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want),
		"berth_pods", "workqueue_adds_total", "berth_source_last_sync_timestamp_seconds"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.ToFloat64(m.reconcileTotal.WithLabelValues("success")); n != 1 {
		t.Fatalf("reconcile success %v", n)
	}
	if n, err := testutil.GatherAndCount(m.Registry, "berth_containers"); err != nil || n != 3 {
		t.Fatalf("berth_containers series %d %v", n, err)
	}
}
