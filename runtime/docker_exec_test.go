package runtime

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/model"
)

func TestDockerExecAndIP(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	ctx := t.Context()
	pod := uniquePod(t)
	id, c := runSleeper(t, d, pod, "x")
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

// waitOutput polls b until it contains want.
func waitOutput(t *testing.T, b *testutil.SyncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(b.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("output %q never contained %q", b.String(), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestDockerExecStream(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	ctx := t.Context()
	pod := uniquePod(t)
	id, _ := runSleeper(t, d, pod, "x")

	t.Run("stdin to stdout, stderr apart", func(t *testing.T) {
		data := make([]byte, 3<<20+777)
		_, _ = rand.Read(data)
		var out, errOut bytes.Buffer
		code, err := d.ExecStream(ctx, id, ExecOptions{Cmd: []string{"/testapp", "cat"}, Stdin: bytes.NewReader(data), Stdout: &out, Stderr: &errOut})
		if err != nil || code != 0 {
			t.Fatalf("cat: code %d err %v stderr %q", code, err, errOut.String())
		}
		if !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("stdout: %d bytes, want the %d sent", out.Len(), len(data))
		}
		if want := fmt.Sprintf("cat: %d bytes\n", len(data)); errOut.String() != want {
			t.Fatalf("stderr %q, want %q", errOut.String(), want)
		}
	})
	t.Run("exit code", func(t *testing.T) {
		var out bytes.Buffer
		code, err := d.ExecStream(ctx, id, ExecOptions{Cmd: []string{"/testapp", "exit", "3"}, Stdout: &out})
		if err != nil || code != 3 || out.String() != "testapp exit starting\n" {
			t.Fatalf("exit 3: code %d err %v stdout %q", code, err, out.String())
		}
	})
	t.Run("tty", func(t *testing.T) {
		var out, errOut bytes.Buffer
		code, err := d.ExecStream(ctx, id, ExecOptions{Cmd: []string{"/testapp", "isatty"}, TTY: true, Stdout: &out, Stderr: &errOut})
		if err != nil || code != 0 || out.String() != "stdin=true stdout=true stderr=true\r\n" || errOut.Len() != 0 {
			t.Fatalf("isatty with a TTY: code %d err %v stdout %q stderr %q", code, err, out.String(), errOut.String())
		}
		out.Reset()
		if _, err := d.ExecStream(ctx, id, ExecOptions{Cmd: []string{"/testapp", "isatty"}, Stdout: &out}); err != nil || out.String() != "stdin=false stdout=false stderr=false\n" {
			t.Fatalf("isatty without a TTY: err %v stdout %q", err, out.String())
		}
	})
	t.Run("resize", func(t *testing.T) {
		stdinR, stdinW := io.Pipe()
		defer stdinR.Close()
		resize := make(chan TermSize)
		out := &testutil.SyncBuffer{}
		type result struct {
			code int
			err  error
		}
		done := make(chan result, 1)
		go func() {
			code, err := d.ExecStream(ctx, id, ExecOptions{Cmd: []string{"/testapp", "size"}, TTY: true, Stdin: stdinR, Stdout: out, Resize: resize})
			done <- result{code, err}
		}()
		for _, sz := range []TermSize{{Width: 90, Height: 30}, {Width: 132, Height: 43}} {
			select {
			case resize <- sz:
			case r := <-done:
				t.Fatalf("size ended early: %+v, output %q", r, out.String())
			}
			waitOutput(t, out, fmt.Sprintf("size %dx%d\r\n", sz.Width, sz.Height))
		}
		if _, err := io.WriteString(stdinW, "q\n"); err != nil {
			t.Fatal(err)
		}
		if r := <-done; r.err != nil || r.code != 0 {
			t.Fatalf("size: %+v, output %q", r, out.String())
		}
	})
	t.Run("deadline", func(t *testing.T) {
		tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		if _, err := d.ExecStream(tctx, id, ExecOptions{Cmd: []string{"/testapp", "sleep"}}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("exec past its deadline: %v", err)
		}
	})
	t.Run("missing or stopped container", func(t *testing.T) {
		if _, err := d.ExecStream(ctx, "berth-missing-"+randHex(6), ExecOptions{Cmd: []string{"/testapp"}}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("exec in a missing container: %v", err)
		}
		stopped := create(t, d, &ContainerConfig{Name: containerName(pod, "stopped"), Cmd: []string{"sleep"}, Labels: testLabels(pod, "stopped")})
		if _, err := d.ExecStream(ctx, stopped, ExecOptions{Cmd: []string{"/testapp", "isatty"}}); !errors.Is(err, ErrNotRunning) {
			t.Fatalf("exec in a created, not started container: %v", err)
		}
	})
}
