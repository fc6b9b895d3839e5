package fake

import (
	"context"
	"fmt"
	"io"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

// Attach stands for a main process that echoes: it copies Stdin to Stdout
// until Stdin's EOF (then returns nil) or ctx's end (ctx's error). A
// missing container is ErrNotFound, a stopped one ErrNotRunning.
func (f *streamFake) Attach(ctx context.Context, id string, o runtime.ExecOptions) error {
	f.mu.Lock()
	f.call("Attach")
	fc, ok := f.containers[id]
	running := ok && fc.c.State == model.StateRunning
	f.mu.Unlock()
	if !ok {
		return fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	if !running {
		return fmt.Errorf("attach to %s: %w", id, runtime.ErrNotRunning)
	}
	out := &gatedWriter{w: o.Stdout}
	defer out.shut()
	done := make(chan error, 1)
	go func() {
		if o.Stdin == nil {
			<-ctx.Done()
			done <- nil
			return
		}
		_, err := io.Copy(out, o.Stdin)
		done <- err
	}()
	select {
	case <-ctx.Done():
		return fmt.Errorf("attach to %s: %w", id, ctx.Err())
	case err := <-done:
		return err
	}
}
