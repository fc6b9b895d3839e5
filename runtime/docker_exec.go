package runtime

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

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
func (d *dockerStreams) Exec(ctx context.Context, id string, cmd []string) (int, []byte, error) {
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

// ExecStream implements Runtime.
func (d *dockerStreams) ExecStream(ctx context.Context, id string, o ExecOptions) (int, error) {
	created, err := d.cli.ContainerExecCreate(ctx, id, container.ExecOptions{
		Cmd: o.Cmd, Tty: o.TTY, AttachStdin: o.Stdin != nil, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		switch {
		case cerrdefs.IsNotFound(err):
			return 0, notFound("container", id, err)
		case cerrdefs.IsConflict(err):
			return 0, fmt.Errorf("exec in %s: %w: %v", id, ErrNotRunning, err)
		}
		return 0, fmt.Errorf("exec create in %s: %w", id, err)
	}
	att, err := d.cli.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{Tty: o.TTY})
	if err != nil {
		return 0, fmt.Errorf("exec attach in %s: %w", id, err)
	}
	defer att.Close()
	ended := make(chan struct{})
	defer close(ended)
	if o.Stdin != nil {
		go func() {
			// Ends at Stdin's EOF or error, or when att is closed.
			if _, err := io.Copy(att.Conn, o.Stdin); err == nil {
				_ = att.CloseWrite()
			}
		}()
	}
	if o.TTY && o.Resize != nil {
		go relayResizes(ctx, ended, o.Resize, func(sz TermSize) {
			_ = d.cli.ContainerExecResize(ctx, created.ID, container.ResizeOptions{Width: uint(sz.Width), Height: uint(sz.Height)})
		})
	}
	if err := relayOutput(ctx, att, o.TTY, o.Stdout, o.Stderr); err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("exec %v in %s: %w", o.Cmd, id, err)
		}
		return 0, fmt.Errorf("exec %v in %s: output: %w", o.Cmd, id, err)
	}
	return d.execExitCode(ctx, created.ID)
}

// execExitCode waits (polling, bounded by ctx and 10 s) until the engine
// no longer reports the exec as running, and returns its exit code. The
// output stream can end a moment before the engine records the exit.
func (d *dockerStreams) execExitCode(ctx context.Context, execID string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		insp, err := d.cli.ContainerExecInspect(ctx, execID)
		if err != nil {
			return 0, fmt.Errorf("exec inspect %s: %w", execID, err)
		}
		if !insp.Running {
			return insp.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("exec %s still running after its output ended: %w", execID, ctx.Err())
		case <-tick.C:
		}
	}
}
