package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/events"
)

// TestEvictionEmptyDirSizeLimit: on the real engine, a container that
// writes 2 MiB into its 1 MiB-limited disk emptyDir is evicted at a
// housekeeping pass (the default 10 s interval: no config key sets it) —
// stopped, Failed/Evicted with the kubelet's message and a Warning event,
// its emptyDir reclaimed, never restarted — while a pod that writes 256 KiB
// under the same limit runs on.
func TestEvictionEmptyDirSizeLimit(t *testing.T) {
	b := startBerth(t, Options{})
	vol := "  volumes: [{name: scratch, emptyDir: {sizeLimit: 1Mi}}]\n"
	spec := func(bytes int) string {
		return fmt.Sprintf("      args: [fill, /scratch/data, %q]\n", fmt.Sprint(bytes)) +
			"      volumeMounts: [{name: scratch, mountPath: /scratch}]\n"
	}
	writeFile(t, b.Pods, "over.yaml", manifest("over", vol, spec(2<<20)))
	writeFile(t, b.Pods, "under.yaml", manifest("under", vol, spec(256<<10)))
	under := waitPodRunning(t, b.Node, "under", "app")

	want := `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `
	p := status(t, b, "over", "evicted", func(p *v1.Pod) bool { return p.Status.Reason == "Evicted" })
	if p.Status.Phase != v1.PodFailed || p.Status.Message != want {
		t.Fatalf("over: phase %s message %q, want Failed %q", p.Status.Phase, p.Status.Message, want)
	}
	waitFor(t, waitLong, "over's containers stopped", func() (bool, string) {
		list := podContainers(t, b.Node, "over")
		return len(running(list)) == 0 && len(list) > 0, describe(list)
	})
	var ev *events.Event
	for _, e := range podEvents(t, b, "over") {
		if e.Reason == "Evicted" {
			ev = &e
		}
	}
	if ev == nil || ev.Type != events.Warning || ev.Message != want {
		t.Errorf("over: Evicted event %+v, want a Warning with %q", ev, want)
	}
	dir := filepath.Join(b.Root, "pods", string(p.UID), "volumes", "scratch")
	waitFor(t, waitLong, "over's emptyDir reclaimed", func() (bool, string) {
		_, err := os.Stat(dir)
		return os.IsNotExist(err), fmt.Sprint(err)
	})

	// Past another housekeeping pass: under runs on, over stays down.
	assertStable(t, b.Node, "under", under, 12*time.Second)
	if p, err := b.Pod("under"); err != nil || p.Status.Phase != v1.PodRunning {
		t.Errorf("under: %v %+v, want Running", err, p)
	}
	if run := running(podContainers(t, b.Node, "over")); len(run) != 0 {
		t.Fatalf("over restarted after its eviction: %v", run)
	}
	p, err := b.Pod("over")
	if err != nil || p == nil {
		t.Fatalf("over later: %v", err)
	}
	if p.Status.Phase != v1.PodFailed || p.Status.Reason != "Evicted" || restarts(p) != 0 {
		t.Fatalf("over later: phase %s reason %q restarts %d, want Failed Evicted 0", p.Status.Phase, p.Status.Reason, restarts(p))
	}
}
