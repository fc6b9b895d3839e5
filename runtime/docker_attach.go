package runtime

import (
	"context"
	"fmt"
	"io"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
)

// Attach connects o's streams to the main process of running container id
// (o.Cmd is unused) until its output ends (the process exited) or ctx
// ends, which returns ctx's error. o.Stdin reaches the process only when
// the container keeps stdin open (a pod's stdin: true); its EOF closes the
// process's stdin with stdinOnce. The container's own Tty decides whether
// output is one stream, whatever o.TTY says; resizes apply to it.
func (d *dockerStreams) Attach(ctx context.Context, id string, o ExecOptions) error {
	insp, err := d.cli.ContainerInspect(ctx, id)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return notFound("container", id, err)
		}
		return fmt.Errorf("attach to %s: %w", id, err)
	}
	if insp.State == nil || !insp.State.Running {
		return fmt.Errorf("attach to %s: %w", id, ErrNotRunning)
	}
	tty, stdin := insp.Config.Tty, o.Stdin != nil && insp.Config.OpenStdin
	att, err := d.cli.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdin: stdin, Stdout: true, Stderr: true})
	if err != nil {
		return fmt.Errorf("attach to %s: %w", id, err)
	}
	defer att.Close()
	ended := make(chan struct{})
	defer close(ended)
	if o.Stdin != nil && !stdin {
		// Read and dropped, so that the caller's stream never backs up.
		go func() { _, _ = io.Copy(io.Discard, o.Stdin) }()
	}
	if stdin {
		go func() {
			if _, err := io.Copy(att.Conn, o.Stdin); err == nil && insp.Config.StdinOnce {
				_ = att.CloseWrite()
			}
		}()
	}
	if tty && o.Resize != nil {
		go relayResizes(ctx, ended, o.Resize, func(sz TermSize) {
			_ = d.cli.ContainerResize(ctx, id, container.ResizeOptions{Width: uint(sz.Width), Height: uint(sz.Height)})
		})
	}
	if err := relayOutput(ctx, att, tty, o.Stdout, o.Stderr); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("attach to %s: %w", id, err)
		}
		return fmt.Errorf("attach to %s: output: %w", id, err)
	}
	return nil
}
