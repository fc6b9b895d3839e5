package runtime

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"

	"github.com/berth-dev/berth/model"
)

func TestEngineSize(t *testing.T) {
	for n, want := range map[int64]string{10 << 20: "10m", 1 << 30: "1g", 3 << 30: "3g", 1536: "1536", 512 << 10: "512k", 1000: "1000", (1 << 20) + 1024: "1025k"} {
		if got := engineSize(n); got != want {
			t.Errorf("engineSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// On an engine of the default log driver, json-file, every container
// berth creates has its logs in that driver, rotated at 10 MiB into at
// most 5 files unless SetContainerLogs said otherwise; the engine's logs
// read across the rotated files and what rotated out is gone from disk.
func TestDockerContainerLogRotation(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	if ld, err := d.ContainerLogDriver(t.Context()); err != nil || ld != (LogDriver{Engine: "json-file", Rotated: true}) {
		t.Fatalf("the test engine's log driver: %+v %v, want json-file, the engine's default", ld, err)
	}
	pod := uniquePod(t)
	logConfig := func(id string) container.LogConfig {
		t.Helper()
		in, err := d.cli.ContainerInspect(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return in.HostConfig.LogConfig
	}
	id := create(t, d, &ContainerConfig{Name: containerName(pod, "default"), Cmd: []string{"sleep"}, Labels: testLabels(pod, "default")})
	if lc := logConfig(id); lc.Type != "json-file" || lc.Config["max-size"] != "10m" || lc.Config["max-file"] != "5" || len(lc.Config) != 2 {
		t.Errorf("log config by default: %+v", lc)
	}

	small, err := NewDocker("")
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	small.SetContainerLogs(ContainerLogs{MaxSize: 8 << 10, MaxFiles: 2})
	id = create(t, small, &ContainerConfig{Name: containerName(pod, "cat"), Cmd: []string{"cat"}, OpenStdin: true, StdinOnce: true, Labels: testLabels(pod, "cat")})
	if lc := logConfig(id); lc.Type != "json-file" || lc.Config["max-size"] != "8k" || lc.Config["max-file"] != "2" {
		t.Errorf("log config set: %+v", lc)
	}
	start(t, small, id)
	waitState(t, small, id, model.StateRunning)
	var in strings.Builder
	for i := range 200 {
		fmt.Fprintf(&in, "line %03d %s\n", i, strings.Repeat("x", 1000))
	}
	if err := small.Attach(t.Context(), id, ExecOptions{Stdin: strings.NewReader(in.String()), Stdout: io.Discard, Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	waitState(t, small, id, model.StateExited)
	rc, err := small.Logs(t.Context(), id, LogOptions{TailLines: -1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Two files of 8 KiB of JSON hold fewer than 16 lines of 1 KiB: the
	// last lines are kept, in order, and the rest is gone.
	var got []string
	for _, line := range strings.Split(string(b), "\n") {
		if line != "" && !strings.HasPrefix(line, "cat: ") { // cat's count, on stderr
			got = append(got, line)
		}
	}
	first := 200 - len(got)
	for i, line := range got {
		if !strings.HasPrefix(line, fmt.Sprintf("line %03d ", first+i)) {
			t.Fatalf("logs after 200 KiB with 8 KiB x 2 files: line %d of %d is %.12q", i, len(got), line)
		}
	}
	if len(b) > 16<<10 || len(got) < 2 {
		t.Errorf("logs after 200 KiB with 8 KiB x 2 files: %d bytes, %d lines", len(b), len(got))
	}
}
