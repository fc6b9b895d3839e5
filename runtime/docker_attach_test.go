package runtime

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/berth-dev/berth/model"
)

func TestDockerAttach(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	ctx := t.Context()
	pod := uniquePod(t)

	// stdinOnce: the client's EOF closes cat's stdin, cat exits, the
	// output ends and so does the attach.
	id := create(t, d, &ContainerConfig{Name: containerName(pod, "cat"), Cmd: []string{"cat"}, OpenStdin: true, StdinOnce: true, Labels: testLabels(pod, "cat")})
	start(t, d, id)
	waitState(t, d, id, model.StateRunning)
	var out, errOut bytes.Buffer
	if err := d.Attach(ctx, id, ExecOptions{Stdin: strings.NewReader("attached\n"), Stdout: &out, Stderr: &errOut}); err != nil {
		t.Fatalf("attach to cat: %v", err)
	}
	if out.String() != "attached\n" || errOut.String() != "cat: 9 bytes\n" {
		t.Errorf("attach to cat: stdout %q stderr %q", out.String(), errOut.String())
	}

	if err := d.Attach(ctx, "berth-missing-"+randHex(6), ExecOptions{Stdout: io.Discard}); !errors.Is(err, ErrNotFound) {
		t.Errorf("attach to a missing container: %v", err)
	}
	waitState(t, d, id, model.StateExited)
	if err := d.Attach(ctx, id, ExecOptions{Stdout: io.Discard}); !errors.Is(err, ErrNotRunning) {
		t.Errorf("attach to an exited container: %v", err)
	}
}
