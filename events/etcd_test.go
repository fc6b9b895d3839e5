package events

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/internal/testutil"
)

func revision(t *testing.T, cli *clientv3.Client) (rev, events int64) {
	t.Helper()
	resp, err := cli.Get(context.Background(), "/events/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision, resp.Count
}

// waitEvents polls etcd until it holds n events, stepping the sink's clock
// by its window each time.
func waitEvents(t *testing.T, cli *clientv3.Client, clk *clocktesting.FakeClock, n int64) int64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		clk.Step(DefaultEventWindow)
		rev, got := revision(t, cli)
		if got == n {
			return rev
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events in etcd, want %d", got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Events recorded within a window are one transaction: one etcd revision
// for many events, at most 128 a transaction; two events of one pod at the
// same instant both kept.
func TestEtcdSinkBatchesEvents(t *testing.T) {
	e := testutil.StartEtcd(t)
	cli := e.Client()
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := NewEtcdSink(cli, nil)
	s.Clock = clk
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	rev0, _ := revision(t, cli)
	at := time.Unix(2000, 0)
	for i := range 10 {
		s.Record(Event{Time: at.Add(time.Duration(i/2) * time.Millisecond), Namespace: "default", Pod: fmt.Sprintf("p%d", i%3), Reason: "Started"})
	}
	// Two events of one pod at the same instant.
	s.Record(Event{Time: at, Namespace: "default", Pod: "p0", Reason: "Created"})
	rev1 := waitEvents(t, cli, clk, 11)
	if rev1-rev0 > 2 {
		t.Errorf("11 events took %d revisions, want 1 (2 if the window split them)", rev1-rev0)
	}

	for i := range 130 {
		s.Record(Event{Time: at.Add(time.Second + time.Duration(i)*time.Microsecond), Namespace: "default", Pod: "q", Reason: "BackOff"})
	}
	rev2 := waitEvents(t, cli, clk, 141)
	if n := rev2 - rev1; n < 2 || n > 3 {
		t.Errorf("130 events took %d revisions, want 2 (at most 128 a transaction)", n)
	}
	if s.Dropped() != 0 {
		t.Errorf("%d events dropped", s.Dropped())
	}
}
