package eviction

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podfs"
	"github.com/berth-dev/berth/store"
)

// overLimit stores a running pod whose disk emptyDir "scratch" of
// sizeLimit 1Mi holds 2 MiB, and returns its row and the volume's dir.
func overLimit(t *testing.T, st *store.Store, paths podfs.Root) (*model.Pod, string) {
	t.Helper()
	q := resource.MustParse("1Mi")
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "default", UID: "uid-big"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a", Image: "app:1"}},
			Volumes: []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{SizeLimit: &q}}}}}}
	p := &model.Pod{Key: "default/big", Source: "file", Spec: pod}
	if err := st.UpsertPod(p); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpsertContainer(&model.Container{ID: "a-0", PodKey: p.Key, PodUID: "uid-big", Name: "a",
		State: model.StateRunning, Seq: 1}); err != nil {
		t.Fatal(err)
	}
	dir, err := paths.VolumeDir("uid-big", "scratch")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeBytes(t, filepath.Join(dir, "fill"), 2<<20)
	return p, dir
}

// Each tick runs a pass: the pod over its limit gets a verdict for its
// incarnation and is enqueued; an edited spec has none; Reclaim empties the
// volume and drops the verdict.
func TestPassOnEachTick(t *testing.T) {
	st, err := store.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	paths := podfs.New(t.TempDir())
	p, dir := overLimit(t, st, paths)
	enqueued := make(chan string, 4)
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := New(Config{Store: st, Paths: paths, Clock: clk, Enqueue: func(k string) { enqueued <- k },
		SpecHash: func(pod *v1.Pod) string { return pod.Spec.Containers[0].Image }})
	tick := make(chan time.Time)
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.passes(t.Context(), tick)
	}()
	t.Cleanup(func() { <-done }) // t.Context ends first
	tick <- clk.Now()
	select {
	case k := <-enqueued:
		if k != p.Key {
			t.Fatalf("enqueued %q", k)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the pass enqueued nothing")
	}
	want := `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `
	if got := m.Message(p); got != want {
		t.Fatalf("verdict %q, want %q", got, want)
	}
	edited := *p
	edited.Spec = p.Spec.DeepCopy()
	edited.Spec.Spec.Containers[0].Image = "app:2"
	if got := m.Message(&edited); got != "" {
		t.Fatalf("an edited spec has the verdict %q", got)
	}
	m.Reclaim(p.Key, p.Spec)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("emptyDir not reclaimed: %v", err)
	}
	if got := m.Message(p); got != "" {
		t.Fatalf("verdict %q after Reclaim", got)
	}
	if m.cfg.Interval != DefaultInterval {
		t.Fatalf("interval %v, want the kubelet's %v", m.cfg.Interval, DefaultInterval)
	}
}
