package informer

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/runtime/fake"
	"github.com/berth-dev/berth/store"
)

// unreachable is an engine that refuses every list and event stream while
// down is set.
type unreachable struct {
	*fake.Runtime
	down  atomic.Bool
	lists atomic.Int32
}

var errRefused = errors.New("dial unix /var/run/docker.sock: connect: connection refused")

func (u *unreachable) ListContainers(ctx context.Context, m map[string]string) ([]*model.Container, error) {
	u.lists.Add(1)
	if u.down.Load() {
		return nil, errRefused
	}
	return u.Runtime.ListContainers(ctx, m)
}

func (u *unreachable) Events(ctx context.Context, m map[string]string) (<-chan runtime.Event, <-chan error) {
	if u.down.Load() {
		errs := make(chan error, 1)
		errs <- errRefused
		return make(chan runtime.Event), errs
	}
	return u.Runtime.Events(ctx, m)
}

// An engine that does not answer is retried after doubling pauses, one log
// line per attempt naming the host and the next pause; a successful list
// resets the pause.
func TestUnreachableDockerBacksOff(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	rt := &unreachable{Runtime: fake.New(clk.Now)}
	rt.down.Store(true)
	st, _ := store.New(nil)
	var logs testutil.SyncBuffer
	inf := NewDockerInformer(rt, st, "n1", clk, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	inf.Host = "unix:///var/run/docker.sock"
	inf.RetryMax = 8 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go inf.Run(ctx)

	lines := func() []string {
		var out []string
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "Docker") || strings.Contains(l, "docker") {
				out = append(out, l)
			}
		}
		return out
	}
	waitAttempt := func(n int) {
		t.Helper()
		testutil.WaitFor(t, 5*time.Second, "attempt logged and waiting", func() bool {
			return len(lines()) == n && clk.HasWaiters()
		})
	}
	want := []string{"1s", "2s", "4s", "8s", "8s"}
	for i, delay := range want {
		waitAttempt(i + 1)
		l := lines()[i]
		if !strings.Contains(l, `msg="cannot connect to Docker at unix:///var/run/docker.sock"`) || !strings.Contains(l, "retry="+delay) {
			t.Fatalf("attempt %d logged %q, want the host and retry=%s", i+1, l, delay)
		}
		if n := rt.lists.Load(); n != int32(i+1) {
			t.Fatalf("after %d logged attempts the engine was listed %d times", i+1, n)
		}
		d, _ := time.ParseDuration(delay)
		clk.Step(d - time.Millisecond)
		if n := rt.lists.Load(); n != int32(i+1) {
			t.Fatalf("retried before the %s pause was over", delay)
		}
		clk.Step(time.Millisecond)
	}
	waitAttempt(len(want) + 1)
	if inf.Synced() {
		t.Fatal("synced while the engine is down")
	}

	rt.down.Store(false)
	clk.Step(8 * time.Second)
	testutil.WaitFor(t, 5*time.Second, "list once the engine answers", inf.Synced)
	testutil.WaitFor(t, 5*time.Second, "reconnection logged", func() bool {
		return strings.Contains(logs.String(), "connected to Docker at unix:///var/run/docker.sock")
	})
	before := len(lines())
	rt.down.Store(true)
	rt.BreakEvents(errRefused)
	testutil.WaitFor(t, 5*time.Second, "break logged", func() bool { return len(lines()) == before+1 && clk.HasWaiters() })
	if l := lines()[before]; !strings.Contains(l, "docker event stream broken") || !strings.Contains(l, "retry=1s") {
		t.Fatalf("a break after a success logged %q, want the stream broken and retry=1s", l)
	}
}
