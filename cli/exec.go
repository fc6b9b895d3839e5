package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/streaming/pkg/httpstream"
)

// execFlags are berth exec's own flags.
type execFlags struct {
	namespace string
	container string
	stdin     bool
	tty       bool
}

func execCmd() *cobra.Command {
	var c apiClient
	var f execFlags
	cmd := &cobra.Command{
		Use:   "exec POD|pod/POD [-c CONTAINER] [-n NAMESPACE] [-i] [-t] -- COMMAND [ARG...]",
		Short: "Run a command in a container of a pod, through berth's API",
		Long: "Run a command in a running container of a pod (pods/exec, as kubectl exec: WebSocket, else SPDY),\n" +
			"streaming stdin (-i), stdout and stderr, with a terminal (-t); berth exec exits with the\n" +
			"command's exit code. Without -c, the container is picked as kubectl picks it. -it with stdin\n" +
			"not a terminal runs without one, as kubectl. berth's API needs an admin token for exec.",
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash > 1 {
				return fmt.Errorf("exec: one POD before --, got %q", args[:dash])
			}
			pod, err := podArg(args[0])
			if err != nil {
				return err
			}
			return runExec(cmd.Context(), &c, f, pod, args[1:], stdio{os.Stdin, os.Stdout, os.Stderr})
		},
	}
	c.addFlags(cmd.Flags())
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "default", "namespace of the pod")
	cmd.Flags().StringVarP(&f.container, "container", "c", "", "container name (default: as kubectl picks it)")
	cmd.Flags().BoolVarP(&f.stdin, "stdin", "i", false, "pass stdin to the command")
	cmd.Flags().BoolVarP(&f.tty, "tty", "t", false, "give the command a terminal")
	return cmd
}

// exitCodeError carries a remote command's non-zero exit code to Main,
// which exits with it.
type exitCodeError struct{ code int }

func (e *exitCodeError) Error() string { return fmt.Sprintf("command exited with code %d", e.code) }

// remoteExit reports the exit code err carries, if it is a remote
// command's exit.
func remoteExit(err error) (int, bool) {
	var e *exitCodeError
	if errors.As(err, &e) {
		return e.code, true
	}
	return 0, false
}

// stdio are the streams of berth exec; a terminal is an *os.File.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// terminalFd returns v's file descriptor if v is a terminal.
func terminalFd(v any) (int, bool) {
	f, ok := v.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return -1, false
	}
	return int(f.Fd()), true
}

func runExec(ctx context.Context, c *apiClient, f execFlags, pod string, command []string, std stdio) error {
	cs, rc, err := c.kube()
	if err != nil {
		return err
	}
	if f.container == "" {
		name, err := defaultContainer(ctx, c, cs, f.namespace, pod, std.err)
		if err != nil {
			return err
		}
		f.container = name
	}
	inFd, inTerm := terminalFd(std.in)
	if f.tty && f.stdin && !inTerm {
		// As kubectl: a terminal would never pass on the input's end.
		fmt.Fprintln(std.err, "Unable to use a TTY - input is not a terminal or the right kind of file")
		f.tty = false
	}
	opts := remotecommand.StreamOptions{Stdout: std.out, Tty: f.tty}
	if f.stdin {
		opts.Stdin = std.in
	}
	if !f.tty {
		opts.Stderr = std.err // with a terminal, its output is one stream
	}
	// The local terminal whose size the command gets, if any; watched from
	// before the session starts so that no resize is missed.
	if f.tty {
		for _, v := range []any{std.in, std.out} {
			if fd, ok := terminalFd(v); ok {
				q := newSizeQueue(fd)
				defer q.stop()
				opts.TerminalSizeQueue = q
				break
			}
		}
	}
	if f.tty && f.stdin {
		old, err := term.MakeRaw(inFd)
		if err != nil {
			return fmt.Errorf("exec: raw terminal mode: %w", err)
		}
		defer term.Restore(inFd, old)
	}

	req := cs.CoreV1().RESTClient().Post().Namespace(f.namespace).Resource("pods").Name(pod).SubResource("exec").
		VersionedParams(&v1.PodExecOptions{Container: f.container, Command: command, Stdin: f.stdin,
			Stdout: true, Stderr: !f.tty, TTY: f.tty}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(rc, "GET", req.URL().String())
	if err != nil {
		return err
	}
	spdy, err := remotecommand.NewSPDYExecutor(rc, "POST", req.URL())
	if err != nil {
		return err
	}
	// As kubectl: WebSocket, else SPDY when the upgrade fails. When both
	// are refused, the WebSocket refusal is the one with the server's
	// Status (SPDY's is its message only).
	err = ws.StreamWithContext(ctx, opts)
	if err != nil && (httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)) {
		wsErr := err
		err = spdy.StreamWithContext(ctx, opts)
		if err != nil && strings.HasPrefix(err.Error(), "unable to upgrade connection") && upgradeStatus(wsErr) {
			err = wsErr
		}
	}
	var exit utilexec.ExitError
	if errors.As(err, &exit) && exit.Exited() {
		return &exitCodeError{exit.ExitStatus()}
	}
	if err != nil {
		return c.kubeError(ctx, err)
	}
	return nil
}

// sizeQueue is the remotecommand.TerminalSizeQueue of a local terminal:
// its size at the start, then at each SIGWINCH.
type sizeQueue struct {
	fd    int
	sizes chan remotecommand.TerminalSize
	winch chan os.Signal
	done  chan struct{}
}

func newSizeQueue(fd int) *sizeQueue {
	q := &sizeQueue{fd: fd, sizes: make(chan remotecommand.TerminalSize, 1), winch: make(chan os.Signal, 1), done: make(chan struct{})}
	signal.Notify(q.winch, syscall.SIGWINCH)
	q.send()
	go func() {
		for {
			select {
			case <-q.done:
				return
			case <-q.winch:
				q.send()
			}
		}
	}()
	return q
}

// send queues the terminal's current size, replacing one not yet taken.
func (q *sizeQueue) send() {
	w, h, err := term.GetSize(q.fd)
	if err != nil || w <= 0 || h <= 0 || w > 0xffff || h > 0xffff {
		return
	}
	select {
	case <-q.sizes:
	default:
	}
	q.sizes <- remotecommand.TerminalSize{Width: uint16(w), Height: uint16(h)}
}

// Next blocks until the next size, nil once stopped.
func (q *sizeQueue) Next() *remotecommand.TerminalSize {
	select {
	case s := <-q.sizes:
		return &s
	case <-q.done:
		return nil
	}
}

func (q *sizeQueue) stop() {
	signal.Stop(q.winch)
	close(q.done)
}
