package runtime

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/berth-dev/berth/model"
)

func TestDockerExecAndIP(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	ctx := t.Context()
	pod := uniquePod(t)
	id := create(t, d, &ContainerConfig{Name: containerName(pod, "x"), Cmd: []string{"sleep"}, Labels: testLabels(pod, "x")})
	start(t, d, id)
	c := waitState(t, d, id, model.StateRunning)
	if c.IP == "" {
		t.Error("bridge container has no IP")
	}
	code, _, err := d.Exec(ctx, id, []string{"/testapp", "exit", "7"})
	if err != nil || code != 7 {
		t.Fatalf("exec exit 7: code %d err %v", code, err)
	}
	code, out, err := d.Exec(ctx, id, []string{"/testapp", "bogus-mode"})
	if err != nil || code != 2 || len(out) == 0 {
		t.Fatalf("exec bogus: code %d out %q err %v", code, out, err)
	}
	tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, _, err := d.Exec(tctx, id, []string{"/testapp", "exit", "0", "5s"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("exec past its deadline: %v", err)
	}
	if _, _, err := d.Exec(ctx, "berth-missing-"+randHex(6), []string{"/testapp"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("exec in a missing container: %v", err)
	}
}

func TestDockerBindCreatesHostDir(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	pod := uniquePod(t)
	dir := t.TempDir() + "/made/by/engine"
	id := create(t, d, &ContainerConfig{Name: containerName(pod, "b"), Cmd: []string{"touch", "/data/f"}, Labels: testLabels(pod, "b"),
		Mounts: []Mount{{Source: dir, Target: "/data", CreateHostDir: true}}})
	start(t, d, id)
	c := waitState(t, d, id, model.StateExited)
	if c.ExitCode != 0 {
		t.Fatalf("touch exited %d", c.ExitCode)
	}
	if _, err := os.Stat(dir + "/f"); err != nil {
		t.Fatalf("file written through the engine-created dir: %v", err)
	}
}
