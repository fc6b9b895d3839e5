package sources

import (
	"net"
	"testing"
	"time"

	"github.com/berth-dev/berth/etcdclient"
	"github.com/berth-dev/berth/internal/testutil"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestHTTPSourcePollsOnItsClock: polls are spaced by the injected clock, not
// by the wall clock; no poll happens until the clock passes the interval.
func TestHTTPSourcePollsOnItsClock(t *testing.T) {
	srv := newManifestServer(t, podManifest("a", "busybox"))
	clk := clocktesting.NewFakeClock(time.Now())
	s := NewHTTPSource("http", srv.URL, time.Minute, nil, Options{Clock: clk})
	updates := startSource(t, s)
	await(t, updates, 5*time.Second, "first poll", exactly("a"))
	testutil.WaitFor(t, 5*time.Second, "poll ticker", clk.HasWaiters)
	clk.Step(time.Minute - time.Nanosecond)
	select {
	case u := <-updates:
		t.Fatalf("polled before the interval passed on the clock: %v", podNames(u))
	default:
	}
	if n := srv.requests.Load(); n != 1 {
		t.Fatalf("%d requests before the interval, want 1", n)
	}
	clk.Step(time.Nanosecond)
	await(t, updates, 5*time.Second, "second poll", exactly("a"))
	if n := srv.requests.Load(); n != 2 {
		t.Fatalf("%d requests after one interval, want 2", n)
	}
}

// TestEtcdSourceRetriesOnBackoffClock: failed lists are retried after a
// doubling wait measured on the injected clock (the one backoff, shared
// with the controller's restarts and pulls).
func TestEtcdSourceRetriesOnBackoffClock(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := l.Addr().String()
	l.Close() // nothing answers there
	clk := clocktesting.NewFakeClock(time.Now())
	s := NewEtcdSource("etcd", EtcdConfig{Client: etcdclient.Config{Endpoints: []string{endpoint}, DialTimeout: time.Second}, Prefix: testPrefix},
		Options{Clock: clk})
	s.RequestTimeout = 100 * time.Millisecond
	s.RetryInitial, s.RetryMax = time.Second, 4*time.Second
	updates := startSource(t, s)

	failedList := func(what string) {
		t.Helper()
		u := await(t, updates, 10*time.Second, what, func(u Update) bool { return u.Err != nil })
		t.Logf("%s: %v", what, u.Err)
		testutil.WaitFor(t, 5*time.Second, "retry timer", clk.HasWaiters)
	}
	quiet := func(step time.Duration) {
		t.Helper()
		clk.Step(step)
		select {
		case u := <-updates:
			t.Fatalf("retried %s early (err %v)", step, u.Err)
		default:
		}
	}
	failedList("first list")
	for _, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
		quiet(wait - time.Millisecond)
		clk.Step(time.Millisecond)
		failedList("retry after " + wait.String())
	}
}
