package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// limitedServer serves, on a listener capped at max connections, /quick
// (answered at once) and /hold (answered when release is closed).
func limitedServer(t *testing.T, max int) (l *ConnLimit, addr string, release chan struct{}, served chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l = LimitConnections(ln, max)
	release = make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/quick", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	srv := httpServer(ln.Addr().String(), mux, DefaultLimits)
	srv.ConnState = l.ConnState
	served = make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return l, ln.Addr().String(), release, served
}

// conn is one client connection sending HTTP/1.1 requests by hand.
type conn struct {
	net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &conn{Conn: c, r: bufio.NewReader(c)}
}

// get sends GET path and returns the response's status line; the body of
// /quick is read, so the connection is then idle (keep-alive).
func (c *conn) get(t *testing.T, path string) string {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if path == "/quick" {
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	return resp.Status
}

// TestConnLimitReclaimsIdleConnections: at the cap, a new connection
// closes the one idle the longest; a connection in a request (a held
// watch) is never closed for it, and with none idle the new one is served
// when one closes.
func TestConnLimitReclaimsIdleConnections(t *testing.T) {
	l, addr, release, _ := limitedServer(t, 2)
	idle, held := dial(t, addr), dial(t, addr)
	if s := idle.get(t, "/quick"); s != "200 OK" {
		t.Fatal(s)
	}
	if s := held.get(t, "/hold"); s != "200 OK" {
		t.Fatal(s)
	}
	third := dial(t, addr)
	if s := third.get(t, "/quick"); s != "200 OK" {
		t.Fatalf("the third connection: %s", s)
	}
	_ = idle.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := idle.r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("the idle connection is not closed: %v", err)
	}
	if n := len(l.slots); n != 2 {
		t.Fatalf("%d slots taken, want 2", n)
	}

	// third is idle now, held still in its request: a fourth reclaims
	// third, and a fifth waits until held ends.
	fourth := dial(t, addr)
	if s := fourth.get(t, "/hold"); s != "200 OK" {
		t.Fatalf("the fourth connection: %s", s)
	}
	fifth := dial(t, addr)
	done := make(chan string, 1)
	go func() {
		_ = fifth.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(fifth, "GET /quick HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(fifth.r, nil)
		if err != nil {
			done <- err.Error()
			return
		}
		done <- resp.Status
	}()
	_ = held.Close()
	close(release)
	if s := <-done; s != "200 OK" {
		t.Fatalf("the fifth connection after one closed: %s", s)
	}
}

// Closing the listener ends an Accept that waits for a slot.
func TestConnLimitCloseEndsAWaitingAccept(t *testing.T) {
	l, addr, _, served := limitedServer(t, 1)
	held := dial(t, addr)
	if s := held.get(t, "/hold"); s != "200 OK" {
		t.Fatal(s)
	}
	waiting := dial(t, addr)
	fmt.Fprintf(waiting, "GET /quick HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = l.Close()
	select {
	case err := <-served:
		if err == nil {
			t.Fatal("Serve returned nil")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve still runs after the listener closed")
	}
}

func TestConnectionCapKeepsHalfTheFileLimit(t *testing.T) {
	n, limit := ConnectionCap(1 << 30)
	if limit == 0 {
		t.Skip("no open-file limit on this system")
	}
	if uint64(n) != limit/2 {
		t.Fatalf("cap %d with an open-file limit of %d, want half", n, limit)
	}
	if n, _ := ConnectionCap(1); n != 1 {
		t.Fatalf("a cap below the limit became %d", n)
	}
}
