package testutil

import (
	"net"
	"strings"
	"testing"
	"time"
)

func TestStablePortIsOutsideTheEphemeralRange(t *testing.T) {
	lo := ephemeralLow()
	seen := map[int]bool{}
	for range 50 {
		p := StablePort(t)
		if p < stableBase || p >= lo {
			t.Fatalf("port %d outside [%d, %d)", p, stableBase, lo)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
}

// The CI failure: while etcd was down, something else held its peer port,
// and the restart died with "address already in use".
func TestEtcdRestartWaitsForItsPort(t *testing.T) {
	e := StartEtcd(t)
	e.Put("/berth/k", "v")
	e.Stop()
	ln, err := net.Listen("tcp", strings.TrimPrefix(e.peerURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(300 * time.Millisecond)
		ln.Close()
	}()
	e.Start()
	<-released
	if n := e.Count("/berth/"); n != 1 {
		t.Fatalf("after restart: %d keys, want 1", n)
	}
}
