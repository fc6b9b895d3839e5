package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLogsCommand(t *testing.T) {
	a := newCLIAPI(t)
	a.addPod(t, "default", "solo", "app")
	a.addContainer(t, "default", "solo", "app", 0, "solo line\n")
	a.addPod(t, "default", "web", "a", "b")
	a.addContainer(t, "default", "web", "a", 0, "a attempt 0\n")
	a.addContainer(t, "default", "web", "a", 1, "a attempt 1\n")
	a.addContainer(t, "default", "web", "b", 0, "b line\n")

	for _, tc := range []struct {
		args         []string
		out, errNote string
	}{
		{[]string{"logs", "solo"}, "solo line\n", ""},
		{[]string{"logs", "web"}, "a attempt 1\n", `Defaulted container "a" out of: a, b` + "\n"},
		{[]string{"logs", "web", "-c", "b"}, "b line\n", ""},
		{[]string{"logs", "web", "-c", "a", "--previous"}, "a attempt 0\n", ""},
		{[]string{"logs", "web", "-c", "a", "-p", "--tail", "5", "--timestamps"}, "a attempt 0\n", ""},
		{[]string{"logs", "pod/solo"}, "solo line\n", ""},
		{[]string{"logs", "po/web", "-c", "b", "--limit-bytes", "4"}, "b li", ""},
		{[]string{"logs", "solo", "--since", "1h"}, "solo line\n", ""},
	} {
		out, errOut, err := runCLI(t, append(tc.args, a.flags()...)...)
		if err != nil || out != tc.out || errOut != tc.errNote {
			t.Errorf("berth %s: out %q stderr %q err %v; want out %q stderr %q",
				strings.Join(tc.args, " "), out, errOut, err, tc.out, tc.errNote)
		}
	}
	if _, _, err := runCLI(t, append([]string{"logs", "web", "-c", "nope"}, a.flags()...)...); err == nil ||
		err.Error() != `Error from server (BadRequest): container nope is not valid for pod web` {
		t.Errorf("unknown container: %v", err)
	}
	if _, _, err := runCLI(t, append([]string{"logs", "web", "-c", "b", "-p"}, a.flags()...)...); err == nil ||
		!strings.Contains(err.Error(), "previous terminated container") {
		t.Errorf("no previous instance: %v", err)
	}
	for _, bad := range [][]string{{"svc/web"}, {"web", "--since-time", "yesterday"}, {"web", "--since", "1h", "--since-time", "2026-01-01T00:00:00Z"}} {
		if _, _, err := runCLI(t, append(append([]string{"logs"}, bad...), a.flags()...)...); err == nil {
			t.Errorf("berth logs %v: no error", bad)
		}
	}
	if _, _, err := runCLI(t, "logs", "web", "--server", a.url); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("without --token-file: %v, want the server's 401", err)
	}
}

func TestLogsContainerDefaultsAsKubectl(t *testing.T) {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default",
		Annotations: map[string]string{"kubectl.kubernetes.io/default-container": "b"}},
		Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "init"}}, Containers: []v1.Container{{Name: "a"}, {Name: "b"}}}}
	if name, note, _ := pickContainer(p); name != "b" || note != "" {
		t.Errorf("annotated default: %q %q", name, note)
	}
	p.Annotations["kubectl.kubernetes.io/default-container"] = "gone"
	if name, note, _ := pickContainer(p); name != "a" || note != `Defaulted container "a" out of: a, b, init (init)` {
		t.Errorf("annotation naming no container: %q %q", name, note)
	}
	if _, _, err := pickContainer(&v1.Pod{}); err == nil {
		t.Error("a pod without containers gave a container")
	}
}

// lineWriter hands each write to lines.
type lineWriter struct {
	mu    sync.Mutex
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range strings.SplitAfter(string(p), "\n") {
		if l != "" {
			w.lines <- l
		}
	}
	return len(p), nil
}

func TestLogsFollowEndsCleanlyOnInterrupt(t *testing.T) {
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("follow") != "true" {
			http.Error(w, "want follow=true, got "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		fmt.Fprintln(w, "first")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // a follow ends when the client leaves
		close(gone)
	}))
	defer srv.Close()
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	out := &lineWriter{lines: make(chan string, 10)}
	done := make(chan error, 1)
	go func() {
		done <- runLogs(ctx, &apiClient{locator{server: srv.URL}}, logsFlags{namespace: "default", container: "app", follow: true, tail: -1}, "web", out, out)
	}()
	select {
	case l := <-out.lines:
		if l != "first\n" {
			t.Fatalf("streamed %q", l)
		}
	case err := <-done:
		t.Fatalf("logs -f returned before the stream ended: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("no streamed line in 5s")
	}
	interrupt()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("interrupted logs -f: %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("logs -f still running 5s after the interrupt")
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server never saw the client leave")
	}
}
