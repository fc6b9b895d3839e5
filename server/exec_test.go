package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/runtime/fake"

	"github.com/berth-dev/berth/metrics"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

// recordingExec wraps the fake's ExecStream and reports each call's error.
type recordingExec struct {
	rt   *fake.Runtime
	errs chan error
}

func (r *recordingExec) ExecStream(ctx context.Context, id string, o runtime.ExecOptions) (int, error) {
	code, err := r.rt.ExecStream(ctx, id, o)
	select {
	case r.errs <- err:
	default:
	}
	return code, err
}

// execAPI serves /exec with the fake runtime on a real http.Server: pod
// default/web has "app" running, "done" exited and its sandbox.
func execAPI(t *testing.T, tokens []string, l Limits) (string, *recordingExec) {
	t.Helper()
	st, _ := store.New(nil)
	rt := fake.New(nil)
	rt.AddImage("img")
	for _, name := range []string{"app", "done", model.SandboxName} {
		labels := map[string]string{runtime.LabelPodNamespace: "default", runtime.LabelPodName: "web",
			runtime.LabelContainerName: name, runtime.LabelAttempt: "0"}
		id, err := rt.CreateContainer(t.Context(), &runtime.ContainerConfig{Name: "c-" + name, Image: "img", Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.StartContainer(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		if name == "done" {
			rt.Exit(id, 0)
		}
		c, _ := rt.InspectContainer(t.Context(), id)
		if _, err := st.UpsertContainer(c); err != nil {
			t.Fatal(err)
		}
	}
	rec := &recordingExec{rt: rt, errs: make(chan error, 1)}
	s := New(Options{Store: st, Registry: metrics.New().Registry, Tokens: tokens})
	RegisterExec(s, rec)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpServer(ln.Addr().String(), s, l)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), rec
}

// execPath is the /exec path of container in default/web running cmd.
func execPath(container string, stdin, tty bool, cmd ...string) string {
	q := url.Values{"command": cmd}
	if stdin {
		q.Set("stdin", "1")
	}
	if tty {
		q.Set("tty", "1")
	}
	return "/exec/default/web/" + container + "?" + q.Encode()
}

type execConn struct {
	conn net.Conn
	br   *bufio.Reader
	fw   *FrameWriter
}

// dialExec sends the upgrade request; on any answer but 101 it returns the
// status code and body.
func dialExec(t *testing.T, addr, method, path, token string, upgrade bool) (*execConn, int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n", method, path, addr)
	if token != "" {
		req += "Authorization: Bearer " + token + "\r\n"
	}
	if upgrade {
		req += "Connection: Upgrade\r\nUpgrade: " + ExecProtocol + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(resp.Body)
		return nil, resp.StatusCode, string(b)
	}
	if resp.Header.Get("Upgrade") != ExecProtocol {
		t.Fatalf("101 with Upgrade %q", resp.Header.Get("Upgrade"))
	}
	return &execConn{conn: conn, br: br, fw: NewFrameWriter(conn)}, resp.StatusCode, ""
}

func mustDial(t *testing.T, addr, path string) *execConn {
	t.Helper()
	c, code, body := dialExec(t, addr, "POST", path, "tok", true)
	if c == nil {
		t.Fatalf("POST %s: %d %s", path, code, body)
	}
	return c
}

type execResult struct {
	stdout, stderr string
	status         ExecStatus
}

// collect reads frames up to and including the status frame.
func (c *execConn) collect(t *testing.T) execResult {
	t.Helper()
	var out, errOut bytes.Buffer
	for {
		ch, p, err := ReadFrame(c.br)
		if err != nil {
			t.Fatalf("read frames (stdout %q, stderr %q): %v", out.String(), errOut.String(), err)
		}
		switch ch {
		case ChanStdout:
			out.Write(p)
		case ChanStderr:
			errOut.Write(p)
		case ChanStatus:
			var st ExecStatus
			if err := json.Unmarshal(p, &st); err != nil {
				t.Fatalf("status frame %q: %v", p, err)
			}
			if _, _, err := ReadFrame(c.br); err != io.EOF {
				t.Errorf("after the status frame: %v, want EOF", err)
			}
			return execResult{out.String(), errOut.String(), st}
		default:
			t.Fatalf("frame on channel %d from the server", ch)
		}
	}
}

// readUntil reads stdout frames until the output so far contains want.
func (c *execConn) readUntil(t *testing.T, want string) {
	t.Helper()
	var out bytes.Buffer
	for !strings.Contains(out.String(), want) {
		ch, p, err := ReadFrame(c.br)
		if err != nil {
			t.Fatalf("waiting for %q (have %q): %v", want, out.String(), err)
		}
		if ch != ChanStdout {
			t.Fatalf("waiting for %q: frame on channel %d: %q", want, ch, p)
		}
		out.Write(p)
	}
}

func exitCode(t *testing.T, st ExecStatus) int {
	t.Helper()
	if st.ExitCode == nil || st.Error != "" {
		t.Fatalf("status %+v, want an exit code", st)
	}
	return *st.ExitCode
}

func TestExecNeedsTokens(t *testing.T) {
	addr, rec := execAPI(t, nil, DefaultLimits)
	for _, token := range []string{"", "anything"} {
		_, code, body := dialExec(t, addr, "POST", execPath("app", false, false, "echo", "hi"), token, true)
		if code != http.StatusForbidden || !strings.Contains(body, ErrAnonymousExec) {
			t.Fatalf("no tokens configured, token %q: %d %q, want 403 %q", token, code, body, ErrAnonymousExec)
		}
	}
	if n := rec.rt.CallCount("ExecStream"); n != 0 {
		t.Fatalf("ExecStream called %d times without tokens", n)
	}
}

func TestExecAuthAndErrors(t *testing.T) {
	addr, rec := execAPI(t, []string{"tok"}, DefaultLimits)
	for _, tc := range []struct {
		name, method, path, token string
		upgrade                   bool
		want                      int
		body                      string
	}{
		{"no token", "POST", execPath("app", false, false, "echo"), "", true, 401, "unauthorized"},
		{"wrong token", "POST", execPath("app", false, false, "echo"), "tok2", true, 401, "unauthorized"},
		{"unknown pod", "POST", "/exec/default/nope/app?command=echo", "tok", true, 404, "pod default/nope not found"},
		{"unknown container", "POST", execPath("nope", false, false, "echo"), "tok", true, 404, `container "nope" in pod default/web not found`},
		{"sandbox", "POST", execPath(model.SandboxName, false, false, "echo"), "tok", true, 404, `container "POD" in pod default/web not found`},
		{"not running", "POST", execPath("done", false, false, "echo"), "tok", true, 409, `container "done" in pod default/web is not running (exited)`},
		{"no command", "POST", "/exec/default/web/app", "tok", true, 400, "no command"},
		{"bad stdin", "POST", "/exec/default/web/app?command=cat&stdin=maybe", "tok", true, 400, "stdin"},
		{"no upgrade", "POST", execPath("app", false, false, "echo"), "tok", false, 426, ExecProtocol},
		{"GET", "GET", execPath("app", false, false, "echo"), "tok", true, 405, ""},
	} {
		_, code, body := dialExec(t, addr, tc.method, tc.path, tc.token, tc.upgrade)
		if code != tc.want || !strings.Contains(body, tc.body) {
			t.Errorf("%s: %d %q, want %d with %q", tc.name, code, body, tc.want, tc.body)
		}
	}
	if n := rec.rt.CallCount("ExecStream"); n != 0 {
		t.Fatalf("ExecStream called %d times by refused requests", n)
	}
	c := mustDial(t, addr, execPath("app", false, false, "echo", "hi", "there"))
	if r := c.collect(t); r.stdout != "hi there\n" || exitCode(t, r.status) != 0 {
		t.Fatalf("right token: %+v", r)
	}
}

func TestExecStreams(t *testing.T) {
	addr, _ := execAPI(t, []string{"tok"}, DefaultLimits)

	t.Run("stdin echoed, stderr apart", func(t *testing.T) {
		c := mustDial(t, addr, execPath("app", true, false, "cat"))
		data := make([]byte, 3*MaxFrame+12345)
		_, _ = rand.Read(data)
		go func() {
			_, _ = c.fw.Channel(ChanStdin).Write(data)
			_ = c.fw.WriteFrame(ChanStdin, nil)
		}()
		r := c.collect(t)
		if r.stdout != string(data) {
			t.Fatalf("stdout: %d bytes, want the %d sent", len(r.stdout), len(data))
		}
		if want := fmt.Sprintf("cat: %d bytes\n", len(data)); r.stderr != want || exitCode(t, r.status) != 0 {
			t.Fatalf("stderr %q status %+v, want %q and 0", r.stderr, r.status, want)
		}
	})
	t.Run("exit code and stderr", func(t *testing.T) {
		if r := mustDial(t, addr, execPath("app", false, false, "exit", "42")).collect(t); exitCode(t, r.status) != 42 {
			t.Fatalf("exit 42: %+v", r)
		}
		r := mustDial(t, addr, execPath("app", false, false, "stderr", "oops")).collect(t)
		if r.stdout != "" || r.stderr != "oops\n" || exitCode(t, r.status) != 0 {
			t.Fatalf("stderr oops: %+v", r)
		}
		r = mustDial(t, addr, execPath("app", false, false, "nosuch")).collect(t)
		if r.stderr != "nosuch: command not found\n" || exitCode(t, r.status) != 127 {
			t.Fatalf("unknown command: %+v", r)
		}
	})
	t.Run("no stdin requested", func(t *testing.T) {
		c := mustDial(t, addr, execPath("app", false, false, "cat"))
		_ = c.fw.WriteFrame(ChanStdin, []byte("dropped"))
		if r := c.collect(t); r.stdout != "" || r.stderr != "cat: 0 bytes\n" {
			t.Fatalf("cat without stdin: %+v", r)
		}
	})
	t.Run("tty and resize", func(t *testing.T) {
		if r := mustDial(t, addr, execPath("app", false, true, "tty")).collect(t); r.stdout != "tty=true\n" {
			t.Fatalf("tty: %+v", r)
		}
		if r := mustDial(t, addr, execPath("app", false, false, "tty")).collect(t); r.stdout != "tty=false\n" {
			t.Fatalf("no tty: %+v", r)
		}
		c := mustDial(t, addr, execPath("app", true, true, "size"))
		for _, sz := range []runtime.TermSize{{Width: 80, Height: 24}, {Width: 132, Height: 50}} {
			b, _ := json.Marshal(sz)
			if err := c.fw.WriteFrame(ChanResize, b); err != nil {
				t.Fatal(err)
			}
			c.readUntil(t, fmt.Sprintf("size %dx%d\n", sz.Width, sz.Height))
		}
		_ = c.fw.WriteFrame(ChanStdin, nil)
		if r := c.collect(t); exitCode(t, r.status) != 0 {
			t.Fatalf("size: %+v", r)
		}
	})
	t.Run("protocol error", func(t *testing.T) {
		c := mustDial(t, addr, execPath("app", true, false, "block"))
		_ = c.fw.WriteFrame(9, []byte("?"))
		if r := c.collect(t); !strings.Contains(r.status.Error, "unknown channel 9") || r.status.ExitCode != nil {
			t.Fatalf("frame on channel 9: %+v", r)
		}
	})
}

// The session outlives the server's read timeout: deadlines are cleared
// after the upgrade.
func TestExecOutlivesReadTimeout(t *testing.T) {
	l := DefaultLimits
	l.Read = 300 * time.Millisecond
	l.ReadHeader = l.Read // for readDeadlinePassed
	addr, _ := execAPI(t, []string{"tok"}, l)
	c := mustDial(t, addr, execPath("app", true, false, "cat"))
	if err := c.fw.WriteFrame(ChanStdin, []byte("early ")); err != nil {
		t.Fatal(err)
	}
	c.readUntil(t, "early ")
	readDeadlinePassed(t, addr) // idle past the read timeout
	if err := c.fw.WriteFrame(ChanStdin, []byte("late")); err != nil {
		t.Fatal(err)
	}
	c.readUntil(t, "late")
	_ = c.fw.WriteFrame(ChanStdin, nil)
	if r := c.collect(t); r.stderr != "cat: 10 bytes\n" || exitCode(t, r.status) != 0 {
		t.Fatalf("after the read timeout: %+v", r)
	}
}

// A client that goes away ends the command's context.
func TestExecClientGoneCancels(t *testing.T) {
	addr, rec := execAPI(t, []string{"tok"}, DefaultLimits)
	c := mustDial(t, addr, execPath("app", true, false, "block"))
	if err := c.fw.WriteFrame(ChanStdin, []byte("x")); err != nil {
		t.Fatal(err)
	}
	c.conn.Close()
	select {
	case err := <-rec.errs:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("ExecStream after the client left: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ExecStream still running 10 s after the client closed the connection")
	}
}
