package stream

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	goruntime "runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/klog/v2"

	"github.com/berth-dev/berth/internal/testutil"
)

// quietLabel marks the goroutines of the quiet test's server (pprof
// labels pass to the goroutines a handler starts).
const quietLabel = "kubeapi-quiet-test"

// newQuietFixture is newStreamFixture on rt whose handlers run labelled.
func newQuietFixture(t *testing.T, rt Runtime) *streamFixture {
	t.Helper()
	return streamFixtureWith(t, rt, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			pprof.Do(r.Context(), pprof.Labels(quietLabel, "server"), func(context.Context) { h.ServeHTTP(w, r) })
		})
	})
}

// waitStreamsServed waits until no goroutine of the labelled server serves
// a WebSocket or SPDY connection: whatever they log at a close is logged
// then.
func waitStreamsServed(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var b strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
		left := ""
		for _, g := range strings.Split(b.String(), "\n\n") {
			if strings.Contains(g, quietLabel) && (strings.Contains(g, "wsstream.(*Conn).handle") || strings.Contains(g, "spdystream.(*Connection).Serve")) {
				left = g
			}
		}
		if left == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream connections still served:\n%s", left)
		}
		goruntime.Gosched()
	}
}

// An exec or attach that ends, or whose client goes, over WebSocket, SPDY
// or the fallback, logs nothing through klog: berth's log got wsstream's
// 'Error on socket receive ... use of closed network connection' at every
// close. (The executors here are client-go's, in this process: their own
// client-side lines are not the server's and are left out.)
func TestStreamsCloseQuietly(t *testing.T) {
	var log testutil.SyncBuffer
	klog.SetSlogLogger(slog.New(slog.NewTextHandler(&log, nil)))
	defer klog.ClearLogger()
	w := &watchedExec{started: make(chan struct{}, 1), returned: make(chan error, 1)}
	f := newQuietFixture(t, w)
	w.Runtime = f.rt
	f.runningApp(t)
	for name, ex := range f.executors(t, f.execURL("web", []string{"echo", "hi"}, false, false)) {
		if err := ex.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: io.Discard, Stderr: io.Discard}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		<-w.started
		<-w.returned
	}
	for name, ex := range f.executors(t, f.execURL("web", []string{"block"}, true, false)) {
		ctx, cancel := context.WithCancel(context.Background())
		stdinR, stdinW := io.Pipe()
		errc := make(chan error, 1)
		go func() {
			errc <- ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdinR, Stdout: io.Discard, Stderr: io.Discard})
		}()
		select {
		case <-w.started:
		case err := <-errc:
			t.Fatalf("%s: %v before the command started", name, err)
		}
		cancel()
		<-w.returned
		<-errc
		stdinW.Close()
	}
	att := newQuietFixture(t, nil) // watchedExec is no Attacher
	att.runningApp(t)
	for name, ex := range att.executors(t, att.attachURL("web")) {
		if err := ex.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdin: strings.NewReader("hi\n"), Stdout: io.Discard, Stderr: io.Discard}); err != nil {
			t.Fatalf("attach %s: %v", name, err)
		}
	}
	waitStreamsServed(t)
	for _, line := range strings.Split(log.String(), "\n") {
		for _, server := range []string{"Error on socket receive", "Stream rejected", "Unable to upgrade", "close stream", "protocol error"} {
			if strings.Contains(line, server) {
				t.Errorf("the server logged through klog: %s", line)
			}
		}
	}
}
