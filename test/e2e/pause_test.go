package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/berth-dev/berth/pause"
	"github.com/berth-dev/berth/runtime"
)

// TestPauseSandboxOnEngine runs berth's pause image as the engine runs a
// sandbox: PID 1 of its container, it must stop on the engine's SIGTERM
// with exit code 0 (not be killed when the grace period ends: PID 1 of a
// namespace ignores signals it does not take), and the image must carry
// its program's digest. Pods under berth cover the rest (fidelity test:
// shareProcessNamespace reaps orphans).
func TestPauseSandboxOnEngine(t *testing.T) {
	need(t)
	t.Parallel()
	b, err := pause.Default()
	if err != nil {
		t.Skipf("this berth cannot build its pause image: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	img := ensurePauseImage(t)
	info, err := dk.InspectImage(ctx, img)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Labels[runtime.LabelImageBinary]; got != b.Digest {
		t.Fatalf("pause image %s: label %s = %q, want the program's digest %s", img, runtime.LabelImageBinary, got, b.Digest)
	}
	id, err := dk.CreateContainer(ctx, &runtime.ContainerConfig{Name: "e2e-pause-" + runID + "-" + randHex(3), Image: img,
		Labels: map[string]string{labelRun: runID}})
	if err != nil {
		t.Fatal(err)
	}
	defer dk.RemoveContainer(context.Background(), id)
	if err := dk.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	c, err := dk.InspectContainer(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Running() {
		t.Fatalf("pause container %s after start", c.State)
	}
	if usage, err := os.ReadFile(fmt.Sprintf("/sys/fs/cgroup/memory/docker/%s/memory.usage_in_bytes", id)); err == nil {
		t.Logf("pause container memory cgroup usage: %s", usage)
	}
	// A grace period far longer than the test waits: a kill at its end
	// would show as exit code 137.
	if err := dk.StopContainer(ctx, id, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	c, err = dk.InspectContainer(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.Running() || c.ExitCode != 0 {
		t.Fatalf("pause container after SIGTERM: %s, exit code %d; want exited 0", c.State, c.ExitCode)
	}
}
