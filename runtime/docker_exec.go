package runtime

import (
	"bytes"
	"context"
	"fmt"
	"io"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
)

// maxExecOutput bounds what Exec keeps of a command's output.
const maxExecOutput = 10 << 10

type capped struct {
	buf bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	if room := maxExecOutput - c.buf.Len(); room > 0 {
		if len(p) > room {
			c.buf.Write(p[:room])
		} else {
			c.buf.Write(p)
		}
	}
	return len(p), nil
}

// Exec implements Runtime.
func (d *Docker) Exec(ctx context.Context, id string, cmd []string) (int, []byte, error) {
	created, err := d.cli.ContainerExecCreate(ctx, id, container.ExecOptions{Cmd: cmd, AttachStdout: true, AttachStderr: true})
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return 0, nil, notFound("container", id, err)
		}
		return 0, nil, fmt.Errorf("exec create in %s: %w", id, err)
	}
	att, err := d.cli.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return 0, nil, fmt.Errorf("exec attach in %s: %w", id, err)
	}
	defer att.Close()
	out := &capped{}
	done := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(out, out, att.Reader)
		done <- err
	}()
	select {
	case <-ctx.Done():
		att.Close()
		<-done
		return 0, out.buf.Bytes(), fmt.Errorf("exec %v in %s: %w", cmd, id, ctx.Err())
	case err := <-done:
		if err != nil && err != io.EOF {
			return 0, out.buf.Bytes(), fmt.Errorf("exec output: %w", err)
		}
	}
	insp, err := d.cli.ContainerExecInspect(ctx, created.ID)
	if err != nil {
		return 0, out.buf.Bytes(), fmt.Errorf("exec inspect: %w", err)
	}
	return insp.ExitCode, out.buf.Bytes(), nil
}
