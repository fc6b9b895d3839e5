package stream

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/util/exec"

	"github.com/berth-dev/berth/internal/testutil/kubestream"
	"github.com/berth-dev/berth/runtime"
)

// execURL is the pods/exec URL of pod web's container app running cmd.
func (f *streamFixture) execURL(pod string, cmd []string, stdin, tty bool) *url.URL {
	q := url.Values{"command": cmd, "container": {"app"}, "stdout": {"true"}}
	if !tty {
		q.Set("stderr", "true")
	}
	if stdin {
		q.Set("stdin", "true")
	}
	if tty {
		q.Set("tty", "true")
	}
	u, _ := url.Parse(f.srv.URL + "/api/v1/namespaces/default/pods/" + pod + "/exec?" + q.Encode())
	return u
}

// executors are the ways kubectl 1.37 can reach pods/exec.
func (f *streamFixture) executors(t *testing.T, u *url.URL) map[string]remotecommand.Executor {
	t.Helper()
	return kubestream.Executors(t, f.cfg, u)
}

func (f *streamFixture) runningApp(t *testing.T) {
	t.Helper()
	f.pod(t, "web", "10.0.0.2", nil, "app")
	f.instance(t, "web", "app", 0, true, "")
}

func TestExecOutputAndExitCode(t *testing.T) {
	f := newStreamFixture(t, nil)
	f.runningApp(t)
	for _, tc := range []struct {
		cmd            []string
		stdout, stderr string
		code           int
	}{
		{[]string{"echo", "hi", "there"}, "hi there\n", "", 0},
		{[]string{"stderr", "oops"}, "", "oops\n", 0},
		{[]string{"exit", "3"}, "", "", 3},
		{[]string{"nosuch"}, "", "nosuch: command not found\n", 127},
	} {
		for name, ex := range f.executors(t, f.execURL("web", tc.cmd, false, false)) {
			var out, errOut bytes.Buffer
			err := ex.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut})
			code := 0
			var ce exec.CodeExitError
			if errors.As(err, &ce) {
				code = ce.Code
			} else if err != nil {
				t.Fatalf("%s %v: %v", name, tc.cmd, err)
			}
			if out.String() != tc.stdout || errOut.String() != tc.stderr || code != tc.code {
				t.Errorf("%s %v: stdout %q stderr %q code %d, want %q %q %d", name, tc.cmd, out.String(), errOut.String(), code, tc.stdout, tc.stderr, tc.code)
			}
			if code == 3 && !strings.Contains(err.Error(), "command terminated with exit code 3") {
				t.Errorf("%s: exit error %q", name, err)
			}
		}
	}
}

// Piped stdin: its EOF closes the command's stdin (v5 close frame on
// WebSocket, half-close on SPDY), and the output is complete.
func TestExecStdinEOF(t *testing.T) {
	f := newStreamFixture(t, nil)
	f.runningApp(t)
	in := strings.Repeat("0123456789abcdef", 64<<10/16) + "end\n"
	for name, ex := range f.executors(t, f.execURL("web", []string{"cat"}, true, false)) {
		var out, errOut bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: strings.NewReader(in), Stdout: &out, Stderr: &errOut})
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if out.String() != in || errOut.String() != "cat: 65540 bytes\n" {
			t.Errorf("%s: stdout %d bytes (equal: %t), stderr %q", name, out.Len(), out.String() == in, errOut.String())
		}
	}
}

// sizeQueue hands out sizes, then blocks until done.
type sizeQueue struct {
	sizes chan remotecommand.TerminalSize
	done  chan struct{}
}

func (q *sizeQueue) Next() *remotecommand.TerminalSize {
	select {
	case sz := <-q.sizes:
		return &sz
	case <-q.done:
		return nil
	}
}

// A TTY session gets the terminal sizes the client sends, in order.
func TestExecTTYResize(t *testing.T) {
	f := newStreamFixture(t, nil)
	f.runningApp(t)
	for name, ex := range f.executors(t, f.execURL("web", []string{"size"}, true, true)) {
		q := &sizeQueue{sizes: make(chan remotecommand.TerminalSize, 2), done: make(chan struct{})}
		q.sizes <- remotecommand.TerminalSize{Width: 80, Height: 24}
		q.sizes <- remotecommand.TerminalSize{Width: 132, Height: 43}
		stdinR, stdinW := io.Pipe()
		out := &lineWaiter{want: "size 132x43\n", seen: make(chan struct{})}
		errc := make(chan error, 1)
		go func() {
			errc <- ex.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdin: stdinR, Stdout: out, Tty: true, TerminalSizeQueue: q})
		}()
		select {
		case <-out.seen:
		case err := <-errc:
			t.Fatalf("%s: ended before the second size: %v (output %q)", name, err, out.String())
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no second size; output %q", name, out.String())
		}
		stdinW.Close()
		close(q.done)
		if err := <-errc; err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := out.String(); got != "size 80x24\nsize 132x43\n" {
			t.Errorf("%s: output %q", name, got)
		}
	}
}

// lineWaiter collects output and closes seen once it contains want.
type lineWaiter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *lineWaiter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *lineWaiter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// Refusals before the upgrade are Status errors kubectl prints.
func TestExecRefusals(t *testing.T) {
	f := newStreamFixture(t, nil)
	f.runningApp(t)
	f.pod(t, "stopped", "10.0.0.3", nil, "app")
	f.instance(t, "stopped", "app", 0, false, "")
	for _, tc := range []struct {
		u    *url.URL
		code int
		msg  string
	}{
		{f.execURL("nosuch", []string{"echo"}, false, false), 404, `pods "nosuch" not found`},
		{f.execURL("stopped", []string{"echo"}, false, false), 400, `container "app" in pod "stopped" is not running (exited)`},
		{f.execURL("web", nil, false, false), 400, "you must specify at least one command for the container"},
	} {
		for name, ex := range f.executors(t, tc.u) {
			err := ex.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: io.Discard, Stderr: io.Discard})
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%s %s: %v, want %q", name, tc.u.Path, err, tc.msg)
			}
		}
	}
	code, body := f.get(t, "/api/v1/namespaces/default/pods/web/exec?command=echo&stdout=true", "")
	if code != http.StatusBadRequest || !strings.Contains(body, "Upgrade request required") {
		t.Errorf("plain GET: %d %s", code, body)
	}
}

// watchedExec reports each ExecStream's end.
type watchedExec struct {
	Runtime
	started  chan struct{}
	returned chan error
}

func (w *watchedExec) ExecStream(ctx context.Context, id string, o runtime.ExecOptions) (int, error) {
	w.started <- struct{}{}
	code, err := w.Runtime.ExecStream(ctx, id, o)
	w.returned <- err
	return code, err
}

// A client that goes (kubectl killed, Ctrl-C) ends the command's session.
func TestExecClientGone(t *testing.T) {
	w := &watchedExec{started: make(chan struct{}, 1), returned: make(chan error, 1)}
	f := newStreamFixture(t, w)
	w.Runtime = f.rt
	f.runningApp(t)
	for _, tty := range []bool{false, true} {
		for name, ex := range f.executors(t, f.execURL("web", []string{"block"}, true, tty)) {
			ctx, cancel := context.WithCancel(context.Background())
			stdinR, stdinW := io.Pipe()
			errc := make(chan error, 1)
			go func() {
				errc <- ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdinR, Stdout: io.Discard, Stderr: io.Discard, Tty: tty})
			}()
			select {
			case <-w.started:
			case err := <-errc:
				t.Fatalf("%s tty=%t: %v before the command started", name, tty, err)
			}
			cancel()
			select {
			case err := <-w.returned:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("%s tty=%t: ExecStream ended with %v", name, tty, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s tty=%t: the command runs on after the client went", name, tty)
			}
			<-errc
			stdinW.Close()
		}
	}
}

// attachURL is the pods/attach URL of pod web's container app.
func (f *streamFixture) attachURL(pod string) *url.URL {
	u := f.execURL(pod, nil, true, false)
	u.Path = strings.TrimSuffix(u.Path, "/exec") + "/attach"
	return u
}

// Attach carries the main process's streams; its end is Success.
func TestAttach(t *testing.T) {
	f := newStreamFixture(t, nil)
	f.runningApp(t)
	for name, ex := range f.executors(t, f.attachURL("web")) {
		var out bytes.Buffer
		err := ex.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdin: strings.NewReader("hello\nworld\n"), Stdout: &out, Stderr: io.Discard})
		if err != nil || out.String() != "hello\nworld\n" {
			t.Errorf("%s: %q, %v", name, out.String(), err)
		}
	}
	f.pod(t, "stopped", "10.0.0.3", nil, "app")
	f.instance(t, "stopped", "app", 0, false, "")
	for name, ex := range f.executors(t, f.attachURL("stopped")) {
		err := ex.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard})
		if err == nil || !strings.Contains(err.Error(), `container "app" in pod "stopped" is not running`) {
			t.Errorf("%s: attach to a stopped container: %v", name, err)
		}
	}
}
