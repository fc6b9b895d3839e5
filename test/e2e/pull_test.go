package e2e

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/image"
	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/internal/testutil"
)

// TestPullProgressShown: a pod whose image comes from a slow registry waits
// in ContainerCreating with the pull's bytes done of total in its message,
// then runs, with a Pulled event giving the bytes downloaded.
func TestPullProgressShown(t *testing.T) {
	b := startBerth(t, Options{})
	bin, err := os.ReadFile(testappBin)
	if err != nil {
		t.Fatal(err)
	}
	reg := testutil.NewRegistry(t)
	// A file unique to this test makes the layer new to the engine: a layer
	// it already holds (an earlier run's) would not be downloaded again.
	unique := []byte(runID + "-" + randHex(8))
	ref, size := reg.AddImage(t, "berth-e2e/pulled", runID, map[string][]byte{"/testapp": bin, "/unique": unique}, []string{"/testapp"})
	t.Cleanup(func() { _, _ = cli().ImageRemove(context.Background(), ref, image.RemoveOptions{Force: true}) })
	reg.Throttle(max(size/6, 64<<10)) // about 6 s for the layer
	writeFile(t, b.Pods, "pulled.yaml", strings.Replace(sleeper("pulled"), testImage, ref, 1))

	p := status(t, b, "pulled", "pull progress in the waiting message", func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Waiting != nil && strings.Contains(cs[0].State.Waiting.Message, " MiB of ")
	})
	msg := p.Status.ContainerStatuses[0].State.Waiting.Message
	if !strings.HasPrefix(msg, `Pulling image "`+ref+`": `) || !strings.Contains(msg, "layers)") {
		t.Errorf("waiting message %q", msg)
	}
	t.Logf("while pulling: %s", msg)
	// berth describe shows the same line to the person waiting on it.
	if out, errOut, err := berthCLI(t, "describe", "pod", "pulled", "--server", b.URL("")); err != nil {
		t.Errorf("berth describe pod pulled: %v %s", err, errOut)
	} else if !regexp.MustCompile(`(?m)^\s+Message:\s+Pulling image "` + regexp.QuoteMeta(ref) + `": [0-9.]+ [KMG]?i?B of [0-9.]+ [KMG]?i?B`).MatchString(out) {
		t.Errorf("berth describe during the pull lacks the progress line:\n%s", out)
	}
	waitPodRunning(t, b.Node, "pulled", "app")
	var pulled string
	for _, e := range podEvents(t, b, "pulled") {
		if e.Reason == "Pulled" {
			pulled = e.Message
		}
	}
	if !strings.Contains(pulled, ref) || !strings.Contains(pulled, "bytes downloaded") {
		t.Errorf("Pulled event %q", pulled)
	}
	if reg.BlobGets() < 1 {
		t.Error("registry served no blob")
	}
}
