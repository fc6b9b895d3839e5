package kubeapi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/klog/v2"
)

// syncLog is a log destination safe for concurrent writes.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitStreamsServed waits until no server goroutine of a WebSocket or
// SPDY connection is left: whatever they log at a close is logged then.
func waitStreamsServed(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	buf := make([]byte, 1<<20)
	for {
		stacks := string(buf[:goruntime.Stack(buf, true)])
		if !strings.Contains(stacks, "wsstream.(*Conn).handle") && !strings.Contains(stacks, "spdystream.(*Connection).Serve") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream connections still served:\n%s", stacks)
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
	var log syncLog
	klog.SetSlogLogger(slog.New(slog.NewTextHandler(&log, nil)))
	defer klog.ClearLogger()
	w := &watchedExec{started: make(chan struct{}, 1), returned: make(chan error, 1)}
	f := newStreamFixture(t, w)
	w.Streams = f.rt
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
	att := newStreamFixture(t, nil) // watchedExec is no Attacher
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
