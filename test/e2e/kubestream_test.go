package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/util/exec"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/internal/testutil/kubestream"
)

// streamsYAML is pod "streams": web serving on 8080, side sleeping (the
// default container), once exiting 3 after 2 s and restarted, cat copying
// its open stdin, term printing its terminal's size.
func streamsYAML() string {
	ctr := func(name string, args ...string) string {
		return fmt.Sprintf("    - name: %s\n      image: %q\n      args: [%s]\n      env: [{name: WHO, value: %s}]\n",
			name, testImage, `"`+strings.Join(args, `", "`)+`"`, name)
	}
	return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: streams\n  annotations:\n    kubectl.kubernetes.io/default-container: side\n" +
		"spec:\n  terminationGracePeriodSeconds: 2\n  containers:\n" +
		ctr("web", "serve") + "      ports: [{containerPort: 8080}]\n" + ctr("side", "sleep") + ctr("once", "exit", "3", "2s") +
		ctr("cat", "cat") + "      stdin: true\n" + ctr("term", "size") + "      stdin: true\n      tty: true\n"
}

// startStreams starts a berth with a token and pod streams, and returns
// its client config once berth reports web and side running and once
// restarted.
func startStreams(t *testing.T) (*execEnv, *rest.Config) {
	t.Helper()
	b, tokenFile := startBerthWithToken(t)
	writeFile(t, b.Pods, "streams.yaml", streamsYAML())
	e := &execEnv{b: b, tokenFile: tokenFile}
	waitFor(t, waitLong, "berth reports streams running with once restarted", func() (bool, string) {
		var p v1.Pod
		if err := e.b.getJSONAs(e.tokenFile, "/pods/default/streams", &p); err != nil {
			return false, err.Error()
		}
		ok := p.Status.PodIP != ""
		for _, cs := range p.Status.ContainerStatuses {
			switch cs.Name {
			case "web", "side", "cat", "term":
				ok = ok && cs.State.Running != nil
			case "once":
				ok = ok && cs.RestartCount >= 1
			}
		}
		return ok, fmt.Sprintf("ip %q %+v", p.Status.PodIP, p.Status.ContainerStatuses)
	})
	tok, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	return e, &rest.Config{Host: b.URL(""), BearerToken: strings.TrimSpace(string(tok))}
}

// TestKubeStreams runs pods/log, pods/exec and pods/portforward through
// client-go against a real berth and engine.
func TestKubeStreams(t *testing.T) {
	e, cfg := startStreams(t)
	cs := kubernetes.NewForConfigOrDie(cfg)
	t.Run("logs", func(t *testing.T) { kubeLogs(t, cs) })
	t.Run("exec", func(t *testing.T) { kubeExec(t, cfg) })
	t.Run("portforward", func(t *testing.T) { kubePortForward(t, cfg) })
	t.Run("attach", func(t *testing.T) { kubeAttach(t, cfg) })
	t.Run("anonymous", func(t *testing.T) {
		for _, sub := range []string{"exec?command=true&stdout=true", "portforward", "log"} {
			resp, err := http.Get(e.b.URL("/api/v1/namespaces/default/pods/streams/" + sub))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), `"kind":"Status"`) {
				t.Errorf("%s without a token: %d %s", sub, resp.StatusCode, b)
			}
		}
	})
}

func kubeLogs(t *testing.T, cs *kubernetes.Clientset) {
	ctx := context.Background()
	logs := func(o v1.PodLogOptions) (string, error) {
		rc, err := cs.CoreV1().Pods("default").GetLogs("streams", &o).Stream(ctx)
		if err != nil {
			return "", err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		return string(b), err
	}
	for _, tc := range []struct {
		o    v1.PodLogOptions
		want string
	}{
		{v1.PodLogOptions{}, "testapp sleep starting\ntestapp sleep stderr\n"},
		{v1.PodLogOptions{Container: "once", Previous: true}, "testapp exit starting\ntestapp exit stderr\n"},
	} {
		// The engine orders a line of stdout and one of stderr written at
		// once either way.
		got, err := logs(tc.o)
		if err != nil || sortedLines(got) != sortedLines(tc.want) {
			t.Errorf("logs %+v: %q, %v; want %q", tc.o, got, err, tc.want)
		}
	}
	if got, err := logs(v1.PodLogOptions{Container: "web", TailLines: ptrTo(int64(1))}); err != nil || (got != "testapp serve starting\n" && got != "testapp serve stderr\n") {
		t.Errorf("logs --tail 1 of web: %q, %v", got, err)
	}
	if got, err := logs(v1.PodLogOptions{Container: "side", Previous: true}); err == nil || err.Error() != `previous terminated container "side" in pod "streams" not found` {
		t.Errorf("logs -p of a container never restarted: %q, %v", got, err)
	}
	if got, err := logs(v1.PodLogOptions{Timestamps: true}); err != nil || !strings.Contains(got, "Z testapp sleep starting\n") || !strings.HasPrefix(got, time.Now().UTC().Format("2006-01-02T")) {
		t.Errorf("logs --timestamps: %q, %v", got, err)
	}

	// -f on once ends when the container stops (it exits 2 s after start).
	start := time.Now()
	fctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	rc, err := cs.CoreV1().Pods("default").GetLogs("streams", &v1.PodLogOptions{Container: "once", Follow: true}).Stream(fctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !strings.Contains(string(b), "testapp exit starting\n") || time.Since(start) > 10*time.Second {
		t.Errorf("logs -f of once: %q, %v after %v", b, err, time.Since(start))
	}
	// -f on side goes on until the client goes.
	fctx2, cancel2 := context.WithCancel(ctx)
	rc, err = cs.CoreV1().Pods("default").GetLogs("streams", &v1.PodLogOptions{Follow: true}).Stream(fctx2)
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, len("testapp sleep starting\ntestapp sleep stderr\n"))
	if _, err := io.ReadFull(rc, first); err != nil || sortedLines(string(first)) != sortedLines("testapp sleep starting\ntestapp sleep stderr\n") {
		t.Errorf("logs -f of side: %q, %v", first, err)
	}
	cancel2()
	if _, err := io.ReadAll(rc); err == nil {
		t.Errorf("logs -f of side: stream still read after the client went")
	}
	rc.Close()
}

func ptrTo[T any](v T) *T { return &v }

// kubeExecutors are the ways kubectl 1.37 reaches pods/exec of container
// ctr of pod streams running cmd, or pods/attach with a nil cmd.
func kubeExecutors(t *testing.T, cfg *rest.Config, ctr string, cmd []string, stdin, tty bool) map[string]remotecommand.Executor {
	t.Helper()
	q := url.Values{"command": cmd, "container": {ctr}, "stdout": {"true"}, "stderr": {fmt.Sprint(!tty)}, "stdin": {fmt.Sprint(stdin)}, "tty": {fmt.Sprint(tty)}}
	sub := "exec"
	if cmd == nil {
		sub = "attach"
	}
	u, _ := url.Parse(cfg.Host + "/api/v1/namespaces/default/pods/streams/" + sub + "?" + q.Encode())
	return kubestream.Executors(t, cfg, u)
}

func kubeExec(t *testing.T, cfg *rest.Config) {
	ctx := context.Background()
	run := func(ex remotecommand.Executor, o remotecommand.StreamOptions) (string, string, int, error) {
		var out, errOut bytes.Buffer
		o.Stdout = &out
		if !o.Tty {
			o.Stderr = &errOut
		}
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		err := ex.StreamWithContext(ctx, o)
		var ce exec.CodeExitError
		if errors.As(err, &ce) {
			return out.String(), errOut.String(), ce.Code, nil
		}
		return out.String(), errOut.String(), 0, err
	}
	for name, ex := range kubeExecutors(t, cfg, "web", []string{"/testapp", "getenv", "WHO"}, false, false) {
		if out, errOut, code, err := run(ex, remotecommand.StreamOptions{}); out != "web\n" || errOut != "" || code != 0 || err != nil {
			t.Errorf("%s getenv: %q %q %d %v", name, out, errOut, code, err)
		}
	}
	for name, ex := range kubeExecutors(t, cfg, "side", []string{"/testapp", "exit", "3"}, false, false) {
		if out, errOut, code, err := run(ex, remotecommand.StreamOptions{}); out != "testapp exit starting\n" || errOut != "testapp exit stderr\n" || code != 3 || err != nil {
			t.Errorf("%s exit 3: %q %q %d %v", name, out, errOut, code, err)
		}
	}
	in := strings.Repeat("berth streams\n", 1<<16)
	for name, ex := range kubeExecutors(t, cfg, "side", []string{"/testapp", "cat"}, true, false) {
		out, errOut, code, err := run(ex, remotecommand.StreamOptions{Stdin: strings.NewReader(in)})
		if out != in || errOut != fmt.Sprintf("cat: %d bytes\n", len(in)) || code != 0 || err != nil {
			t.Errorf("%s cat of %d bytes: %d bytes out (equal %t), %q %d %v", name, len(in), len(out), out == in, errOut, code, err)
		}
	}
	for name, ex := range kubeExecutors(t, cfg, "side", []string{"/testapp", "isatty"}, true, true) {
		// stdin stays open until the command is done, as kubectl's terminal.
		stdinR, stdinW := io.Pipe()
		out, _, code, err := run(ex, remotecommand.StreamOptions{Stdin: stdinR, Tty: true})
		stdinW.Close()
		if out != "stdin=true stdout=true stderr=true\r\n" || code != 0 || err != nil {
			t.Errorf("%s isatty with a TTY: %q %d %v", name, out, code, err)
		}
	}
	for name, ex := range kubeExecutors(t, cfg, "side", []string{"/testapp", "size"}, true, true) {
		q := make(chan remotecommand.TerminalSize, 2)
		q <- remotecommand.TerminalSize{Width: 80, Height: 24}
		q <- remotecommand.TerminalSize{Width: 132, Height: 43}
		stdinR, stdinW := io.Pipe()
		out := &testutil.SyncBuffer{}
		errc := make(chan error, 1)
		go func() {
			errc <- ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdinR, Stdout: out, Tty: true, TerminalSizeQueue: chanQueue(q)})
		}()
		waitFor(t, 20*time.Second, name+": size 132x43 printed", func() (bool, string) {
			return strings.Contains(out.String(), "size 132x43"), out.String()
		})
		_, _ = stdinW.Write([]byte("q\r"))
		if err := <-errc; err != nil {
			t.Errorf("%s size: %v (output %q)", name, err, out.String())
		}
		stdinW.Close()
	}
}

type chanQueue chan remotecommand.TerminalSize

func (q chanQueue) Next() *remotecommand.TerminalSize {
	sz, ok := <-q
	if !ok {
		return nil
	}
	return &sz
}

func kubePortForward(t *testing.T, cfg *rest.Config) {
	u, _ := url.Parse(cfg.Host + "/api/v1/namespaces/default/pods/streams/portforward")
	for name, d := range kubestream.Dialers(t, cfg, u) {
		local, stop, _ := kubestream.Forward(t, d, 8080)
		for i := range 3 {
			c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
			resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/env?name=WHO", local))
			if err != nil {
				t.Fatalf("%s: request %d: %v", name, i, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "web" {
				t.Errorf("%s: request %d: %d %q", name, i, resp.StatusCode, b)
			}
		}
		stop()

		local, stop, done := kubestream.Forward(t, d, 9999)
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", local))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
		b, _ := io.ReadAll(c)
		c.Close()
		select {
		case err := <-done:
			if len(b) != 0 || !errors.Is(err, portforward.ErrLostConnectionToPod) {
				t.Errorf("%s: port 9999: read %q, forward ended with %v", name, b, err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("%s: port 9999: the forward did not report the refused connection", name)
		}
		stop()
	}
}

// kubeAttach attaches to cat (its stdin comes back) and term (a TTY that
// takes the client's size); leaving ends the session.
func kubeAttach(t *testing.T, cfg *rest.Config) {
	for name, ex := range kubeExecutors(t, cfg, "cat", nil, true, false) {
		ctx, cancel := context.WithCancel(context.Background())
		stdinR, stdinW := io.Pipe()
		out := &testutil.SyncBuffer{}
		errc := make(chan error, 1)
		go func() {
			errc <- ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdinR, Stdout: out, Stderr: io.Discard})
		}()
		line := "attached by " + name + "\n"
		_, _ = stdinW.Write([]byte(line))
		waitFor(t, 20*time.Second, name+": cat echoes the attached stdin", func() (bool, string) {
			return strings.Contains(out.String(), line), out.String()
		})
		cancel()
		<-errc
		stdinW.Close()
	}
	width := uint16(90)
	for name, ex := range kubeExecutors(t, cfg, "term", nil, true, true) {
		// A new size each time: the same one would not signal the process.
		width++
		want := fmt.Sprintf("size %dx33", width)
		ctx, cancel := context.WithCancel(context.Background())
		q := make(chan remotecommand.TerminalSize, 1)
		q <- remotecommand.TerminalSize{Width: width, Height: 33}
		stdinR, stdinW := io.Pipe()
		out := &testutil.SyncBuffer{}
		errc := make(chan error, 1)
		go func() {
			errc <- ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdinR, Stdout: out, Tty: true, TerminalSizeQueue: chanQueue(q)})
		}()
		waitFor(t, 20*time.Second, name+": term prints the attached terminal's size", func() (bool, string) {
			return strings.Contains(out.String(), want), out.String()
		})
		cancel()
		<-errc
		stdinW.Close()
	}
}

// sortedLines is s's lines in sorted order.
func sortedLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	sort.Strings(lines)
	return strings.Join(lines, "")
}
