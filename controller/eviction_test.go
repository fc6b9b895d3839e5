package controller

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/model"
)

// limitedPod is a pod whose container mounts a disk emptyDir "scratch" of
// sizeLimit limit.
func limitedPod(name, limit string, env ...string) *v1.Pod {
	p := testPod(name, ctr("a", "app:1", env...))
	q := resource.MustParse(limit)
	p.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{SizeLimit: &q}}}}
	p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
	return p
}

// writeBytes writes n non-zero bytes to path (allocated, not sparse).
func writeBytes(t *testing.T, path string, n int) {
	t.Helper()
	if err := os.WriteFile(path, bytes.Repeat([]byte{'x'}, n), 0o644); err != nil {
		t.Fatal(err)
	}
}

// evictionPass returns a function that runs one housekeeping pass of the
// controller's eviction manager and returns once it ended.
func (h *harness) evictionPass() (pass func()) {
	return func() { h.ctrl.evict.Pass(h.t.Context()) }
}

// drainQueue empties the controller's queue (fed by the background
// operations' wakeups) and returns the keys it held.
func (h *harness) drainQueue() []string {
	var keys []string
	for h.ctrl.queue.Len() > 0 {
		k, _ := h.ctrl.queue.Get()
		h.ctrl.queue.Done(k)
		keys = append(keys, k)
	}
	return keys
}

func evictedEvents(rec *events.Buffer, pod string) []events.Event {
	var out []events.Event
	for _, e := range rec.List() {
		if e.Pod == pod && e.Reason == "Evicted" {
			out = append(out, e)
		}
	}
	return out
}

// A pod whose disk emptyDir holds more than its sizeLimit is evicted at the
// next housekeeping pass: stopped, Failed/Evicted with the kubelet's
// message and event, never restarted, its emptyDir reclaimed; a pod under
// its limit is untouched; an edited spec runs again.
func TestEmptyDirSizeLimitEvicts(t *testing.T) {
	h := newHarness(t)
	rec := events.NewBuffer(100)
	h.ctrl.cfg.Events = rec
	if h.ctrl.cfg.EvictionInterval != 10*time.Second {
		t.Fatalf("default housekeeping interval %v, want the kubelet's 10s", h.ctrl.cfg.EvictionInterval)
	}
	big, small := limitedPod("big", "1Mi"), limitedPod("small", "1Mi")
	h.put(big)
	h.put(small)
	h.settle("default/big")
	h.settle("default/small")
	bigDir, smallDir := mustEmptyDir(t, h.ctrl, big, "scratch"), mustEmptyDir(t, h.ctrl, small, "scratch")
	writeBytes(t, filepath.Join(bigDir, "fill"), 2<<20)
	writeBytes(t, filepath.Join(smallDir, "fill"), 256<<10)
	starts := h.rt.CallCount("StartContainer")

	pass := h.evictionPass()
	h.drainQueue()
	pass()
	if keys := h.drainQueue(); len(keys) != 1 || keys[0] != "default/big" {
		t.Fatalf("the pass enqueued %v, want the pod over its limit", keys)
	}
	if len(h.running("default/big")) != 2 {
		t.Fatal("the housekeeping pass acted itself; the reconcile decides")
	}
	h.settle("default/big")
	h.settle("default/small")

	if run := h.running("default/big"); len(run) != 0 {
		t.Fatalf("evicted pod still runs %v", run)
	}
	want := `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `
	s := h.status("default/big")
	if s.Phase != v1.PodFailed || s.Reason != "Evicted" || s.Message != want {
		t.Fatalf("status %s %q %q, want Failed Evicted %q", s.Phase, s.Reason, s.Message, want)
	}
	evs := evictedEvents(rec, "big")
	if len(evs) != 1 || evs[0].Type != events.Warning || evs[0].Message != want || evs[0].Container != "" {
		t.Fatalf("Evicted events %+v, want one Warning with %q", evs, want)
	}
	if _, err := os.Stat(bigDir); !os.IsNotExist(err) {
		t.Errorf("the evicted pod's emptyDir was not reclaimed: %v", err)
	}
	if run := h.running("default/small"); len(run) != 2 {
		t.Fatalf("pod under its limit: running %v", run)
	}
	if s := h.status("default/small"); s.Phase != v1.PodRunning {
		t.Fatalf("pod under its limit: phase %s %q", s.Phase, s.Reason)
	}
	if _, err := os.Stat(filepath.Join(smallDir, "fill")); err != nil {
		t.Errorf("pod under its limit lost its emptyDir: %v", err)
	}

	// Not restarted, whatever further passes and resyncs.
	for range 3 {
		pass()
		h.settle("default/big")
		h.settle("default/small")
	}
	if got := h.rt.CallCount("StartContainer"); got != starts {
		t.Fatalf("%d starts after the eviction", got-starts)
	}
	if s := h.status("default/big"); s.Phase != v1.PodFailed || s.Reason != "Evicted" || s.Message != want {
		t.Fatalf("later status %s %q %q", s.Phase, s.Reason, s.Message)
	}
	if n := len(evictedEvents(rec, "big")); n != 1 {
		t.Fatalf("%d Evicted events, want 1", n)
	}

	// An edited spec is a new incarnation, with an empty volume.
	h.put(limitedPod("big", "1Mi", "X=2"))
	h.settle("default/big")
	if h.running("default/big")["a"] == nil {
		t.Fatal("edited pod not run again")
	}
	if ents, err := os.ReadDir(bigDir); err != nil || len(ents) != 0 {
		t.Fatalf("new incarnation's emptyDir: %v %v, want empty", ents, err)
	}
	pass()
	h.settle("default/big")
	if s := h.status("default/big"); s.Phase != v1.PodRunning {
		t.Fatalf("new incarnation: phase %s %q", s.Phase, s.Reason)
	}
}

// A limit of 0, a Memory emptyDir, and a pod that ended are not measured.
func TestEvictionSkips(t *testing.T) {
	h := newHarness(t)
	zero := limitedPod("zero", "0")
	mem := limitedPod("mem", "1Mi")
	mem.Spec.Volumes[0].EmptyDir.Medium = v1.StorageMediumMemory
	never := limitedPod("never", "1Mi")
	never.Spec.RestartPolicy = v1.RestartPolicyNever
	for _, p := range []*v1.Pod{zero, mem, never} {
		h.put(p)
		h.settle("default/" + p.Name)
	}
	for _, p := range []*v1.Pod{zero, never} {
		writeBytes(t, filepath.Join(mustEmptyDir(t, h.ctrl, p, "scratch"), "fill"), 2<<20)
	}
	h.exit("default/never", "a", 0)
	h.settle("default/never")
	pass := h.evictionPass()
	h.drainQueue()
	pass()
	if keys := h.drainQueue(); len(keys) != 0 {
		t.Fatalf("enqueued %v, want none", keys)
	}
	if s := h.status("default/zero"); s.Phase != v1.PodRunning {
		t.Errorf("sizeLimit 0: phase %s %q", s.Phase, s.Reason)
	}
	if s := h.status("default/never"); s.Reason == "Evicted" {
		t.Errorf("a pod with nothing running was evicted")
	}
}

func mustEmptyDir(t *testing.T, c *Controller, pod *v1.Pod, volume string) string {
	t.Helper()
	dir, err := c.paths.VolumeDir(string(pod.UID), volume)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// An eviction stops the pod within evictionGrace, not within the period
// the (possibly untrusted) pod chose for itself.
func TestEvictionIgnoresThePodsGracePeriod(t *testing.T) {
	p := &v1.Pod{}
	p.Name, p.Namespace, p.UID = "web", "default", "uid-web"
	long := int64(1 << 30)
	p.Spec.TerminationGracePeriodSeconds = &long
	p.Spec.Containers = []v1.Container{{Name: "app", Image: "img:1"}}
	in := input(p, row(p, model.SandboxName, 0, model.StateRunning, 0), row(p, "app", 0, model.StateRunning, 0))
	in.Evicted = `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `
	pl := plan(in)
	if len(pl.Kill) != 2 {
		t.Fatalf("kills %+v", pl.Kill)
	}
	for _, k := range pl.Kill {
		if k.Grace != evictionGrace {
			t.Errorf("%s stopped within %v, want %v", k.Container.Name, k.Grace, evictionGrace)
		}
	}
	in.Evicted = ""
	in.Pod.Terminal, in.Pod.TerminalSpec = "Succeeded", specHash(p)
	for _, k := range plan(in).Kill {
		if k.Grace != 0 {
			t.Errorf("a pod ended otherwise keeps its own period: %v", k.Grace)
		}
	}
}
