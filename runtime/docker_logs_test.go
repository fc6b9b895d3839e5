package runtime

import (
	"io"
	"strings"
	"testing"

	"github.com/berth-dev/berth/model"
)

func TestDockerLogs(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	ctx := t.Context()
	pod := uniquePod(t)
	id := create(t, d, &ContainerConfig{Name: containerName(pod, "l"), Cmd: []string{"exit", "0"}, Labels: testLabels(pod, "l")})
	start(t, d, id)
	waitState(t, d, id, model.StateExited)
	read := func(opts LogOptions) string {
		t.Helper()
		rc, err := d.Logs(ctx, id, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	all := read(LogOptions{TailLines: -1})
	if !strings.Contains(all, "testapp exit starting\n") || !strings.Contains(all, "testapp exit stderr\n") {
		t.Fatalf("logs %q", all)
	}
	if got := read(LogOptions{TailLines: 1}); strings.Count(got, "\n") != 1 {
		t.Fatalf("tail 1: %q", got)
	}
	if got := read(LogOptions{TailLines: 1, Timestamps: true}); !strings.Contains(got, "Z testapp") {
		t.Fatalf("timestamps: %q", got)
	}
}
