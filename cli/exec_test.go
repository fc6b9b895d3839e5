package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// noWebSocket refuses WebSocket upgrades as a server without them does,
// so that exec falls back to SPDY.
func noWebSocket(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			http.Error(w, "no websocket here", http.StatusBadRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func TestExecCommand(t *testing.T) {
	isolate(t)
	a := newCLIAPI(t)
	a.addPod(t, "default", "web", "app", "side")
	a.runContainer(t, "default", "web", "app")
	a.runContainer(t, "default", "web", "side")
	spdyOnly := httptest.NewServer(noWebSocket(a.handler))
	defer spdyOnly.Close()

	for proto, url := range map[string]string{"websocket": a.url, "spdy": spdyOnly.URL} {
		c := &apiClient{locator{server: url, tokenFile: a.tokenFile}}
		run := func(f execFlags, stdin string, cmd ...string) (string, string, error) {
			t.Helper()
			var out, errOut bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if f.namespace == "" {
				f.namespace = "default"
			}
			err := runExec(ctx, c, f, "web", cmd, stdio{strings.NewReader(stdin), &out, &errOut})
			return out.String(), errOut.String(), err
		}
		out, errOut, err := run(execFlags{}, "", "echo", "hi")
		if err != nil || out != "hi\n" || errOut != `Defaulted container "app" out of: app, side`+"\n" {
			t.Errorf("%s: exec web -- echo hi: %v %q %q", proto, err, out, errOut)
		}
		out, errOut, err = run(execFlags{container: "side", stdin: true}, "piped\n", "cat")
		if err != nil || out != "piped\n" || errOut != "cat: 6 bytes\n" {
			t.Errorf("%s: exec -i -c side -- cat: %v %q %q", proto, err, out, errOut)
		}
		out, errOut, err = run(execFlags{container: "app", stdin: true, tty: true}, "x", "tty")
		if err != nil || out != "tty=false\n" || errOut != "Unable to use a TTY - input is not a terminal or the right kind of file\n" {
			t.Errorf("%s: exec -it with piped stdin: %v %q %q", proto, err, out, errOut)
		}
		if _, _, err := run(execFlags{container: "app"}, "", "exit", "3"); err == nil {
			t.Errorf("%s: exit 3: no error", proto)
		} else if code, ok := remoteExit(err); !ok || code != 3 {
			t.Errorf("%s: exit 3: %v", proto, err)
		}
		want := map[string]string{"websocket": "Error from server (BadRequest): container nope is not valid for pod web",
			"spdy": "Error from server: container nope is not valid for pod web"}[proto]
		if _, _, err := run(execFlags{container: "nope"}, "", "echo"); err == nil || err.Error() != want {
			t.Errorf("%s: unknown container: %v", proto, err)
		}
	}
	c := &apiClient{locator{server: a.url}}
	err := runExec(context.Background(), c, execFlags{namespace: "default", container: "app"}, "web", []string{"echo"}, stdio{strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), "wants a token") {
		t.Errorf("exec without a token: %v", err)
	}
}

func TestExecTakesPodSlashName(t *testing.T) {
	isolate(t)
	a := newCLIAPI(t)
	a.addPod(t, "default", "web", "app")
	a.runContainer(t, "default", "web", "app")
	// berth exec writes to the process's stdout: only the outcome here.
	if _, _, err := runCLI(t, append(append([]string{"exec", "pod/web"}, a.flags()...), "--", "exit", "4")...); err == nil {
		t.Error("exec pod/web -- exit 4: no error")
	} else if code, ok := remoteExit(err); !ok || code != 4 {
		t.Errorf("exec pod/web -- exit 4: %v", err)
	}
	if _, _, err := runCLI(t, append(append([]string{"exec", "svc/web"}, a.flags()...), "--", "echo")...); err == nil || !strings.Contains(err.Error(), "pods only") {
		t.Errorf("exec svc/web: %v", err)
	}
}
