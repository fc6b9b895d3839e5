package fake

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

// Exec answers with ExecFunc (default: exit 0, no output) in a running
// container.
func (f *streamFake) Exec(ctx context.Context, id string, cmd []string) (int, []byte, error) {
	f.mu.Lock()
	f.call("Exec")
	fc, ok := f.containers[id]
	fn := f.ExecFunc
	running := ok && fc.c.State == model.StateRunning
	f.mu.Unlock()
	if !running {
		return 0, nil, fmt.Errorf("container %s not running: %w", id, runtime.ErrNotFound)
	}
	if fn == nil {
		return 0, nil, nil
	}
	return fn(id, cmd)
}

// ExecStream runs a built-in command in memory, in any running container:
//
//	cat        copies stdin to stdout, then writes "cat: N bytes\n" to stderr
//	echo ARGS  writes ARGS and a newline to stdout
//	stderr ARGS writes ARGS and a newline to stderr
//	exit N     exits with N
//	tty        writes "tty=true" or "tty=false" to stdout
//	size       writes "size WxH\n" for every size on Resize, until stdin's EOF
//	block      runs until ctx ends
//
// Anything else writes "CMD: command not found" to stderr and exits 127.
// With TTY, stderr goes to stdout as on a terminal.
func (f *streamFake) ExecStream(ctx context.Context, id string, o runtime.ExecOptions) (int, error) {
	f.mu.Lock()
	f.call("ExecStream")
	fc, ok := f.containers[id]
	running := ok && fc.c.State == model.StateRunning
	f.mu.Unlock()
	if !ok {
		return 0, fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	if !running || len(o.Cmd) == 0 {
		if !running {
			return 0, fmt.Errorf("exec in %s: %w", id, runtime.ErrNotRunning)
		}
		return 0, fmt.Errorf("exec in %s: no command", id)
	}
	out := &gatedWriter{w: o.Stdout}
	errOut := &gatedWriter{w: o.Stderr}
	if o.TTY {
		errOut = out
	}
	defer out.shut()
	defer errOut.shut()
	stdin := o.Stdin
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := fakeCommand(ctx, o, stdin, out, errOut)
		done <- result{code, err}
	}()
	select {
	case <-ctx.Done():
		return 0, fmt.Errorf("exec %v in %s: %w", o.Cmd, id, ctx.Err())
	case r := <-done:
		return r.code, r.err
	}
}

func fakeCommand(ctx context.Context, o runtime.ExecOptions, stdin io.Reader, out, errOut io.Writer) (int, error) {
	args := o.Cmd[1:]
	switch o.Cmd[0] {
	case "cat":
		n, err := io.Copy(out, stdin)
		if err != nil {
			return 0, fmt.Errorf("fake cat: %w", err)
		}
		fmt.Fprintf(errOut, "cat: %d bytes\n", n)
	case "echo":
		fmt.Fprintln(out, strings.Join(args, " "))
	case "stderr":
		fmt.Fprintln(errOut, strings.Join(args, " "))
	case "exit":
		if len(args) == 0 {
			return 0, nil
		}
		code, err := strconv.Atoi(args[0])
		if err != nil {
			return 0, fmt.Errorf("fake exit: %w", err)
		}
		return code, nil
	case "tty":
		fmt.Fprintf(out, "tty=%t\n", o.TTY)
	case "size":
		eof := make(chan struct{})
		go func() {
			// Ends at stdin's EOF or error (the caller closes it).
			_, _ = io.Copy(io.Discard, stdin)
			close(eof)
		}()
		for {
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-eof:
				return 0, nil
			case sz := <-o.Resize:
				fmt.Fprintf(out, "size %dx%d\n", sz.Width, sz.Height)
			}
		}
	case "block":
		<-ctx.Done()
		return 0, ctx.Err()
	default:
		fmt.Fprintf(errOut, "%s: command not found\n", o.Cmd[0])
		return 127, nil
	}
	return 0, nil
}

// gatedWriter drops writes that start once shut, so that a command still
// running after ExecStream returned does not write behind its caller's back.
type gatedWriter struct {
	w      io.Writer
	closed atomic.Bool
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	if g.closed.Load() {
		return 0, io.ErrClosedPipe
	}
	if g.w == nil {
		return len(p), nil
	}
	return g.w.Write(p)
}

func (g *gatedWriter) shut() { g.closed.Store(true) }
