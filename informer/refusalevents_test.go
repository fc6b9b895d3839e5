package informer

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/store"
)

// countingRecorder counts the events recorded, passing them on.
type countingRecorder struct {
	mu   sync.Mutex
	n    int
	next events.Recorder
}

func (c *countingRecorder) Record(e events.Event) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	c.next.Record(e)
}

func (c *countingRecorder) take() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = 0
	return n
}

func eventInformer(t *testing.T) (*SourceInformer, *store.Store, *countingRecorder, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Unix(5000, 0))
	st, err := store.New(nil, store.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	inf := NewSourceInformer(st, clk, nil, nil)
	rec := &countingRecorder{next: store.EventRecorder{Store: st}}
	inf.Events, inf.NodeName = rec, "n1"
	return inf, st, rec, clk
}

// An origin whose every pod is refused (each with its own message) costs
// at most MaxRefusalEvents events and one counting the rest per update;
// an update carrying the same refusals records nothing until RefusalResend
// has passed, when the same events occur again (their counts rise); a
// refusal the previous update did not carry is recorded at once.
func TestRefusalEventsAreNewOrResentAndCapped(t *testing.T) {
	inf, st, rec, clk := eventInformer(t)
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{pod("holder", "img:1", 8080)}})
	rec.take()
	refused := make([]manifest.Desired, 500)
	for n := range refused {
		refused[n] = pod(fmt.Sprintf("p%03d", n), "img:1", 8080)
	}
	http := sources.Update{Source: "http", Pods: refused}
	mustApply(t, inf, http)
	if n := rec.take(); n != MaxRefusalEvents+1 {
		t.Fatalf("the first update recorded %d events, want %d", n, MaxRefusalEvents+1)
	}
	for range 3 {
		clk.Step(time.Second)
		mustApply(t, inf, http)
	}
	if n := rec.take(); n != 0 {
		t.Fatalf("updates carrying the same refusals recorded %d events, want 0", n)
	}
	clk.Step(RefusalResend)
	mustApply(t, inf, http)
	if n := rec.take(); n != MaxRefusalEvents+1 {
		t.Fatalf("after RefusalResend %d events, want %d", n, MaxRefusalEvents+1)
	}
	rows, _ := st.Snapshot().Events(nil)
	more := 0
	for _, r := range rows {
		if c, _, _ := r.Occurrences(); c != 2 {
			t.Errorf("event %q occurred %d times, want 2", r.Event.Message, c)
		}
		if strings.Contains(r.Event.Message, "and 490 more manifests refused") {
			more++
		}
	}
	if len(rows) != MaxRefusalEvents+1 || more != 1 {
		t.Fatalf("%d event rows (%d counting the rest), want %d", len(rows), more, MaxRefusalEvents+1)
	}

	clk.Step(time.Second)
	http.Pods = append(append([]manifest.Desired(nil), refused...), pod("late", "img:1", 8080))
	mustApply(t, inf, http)
	if n := rec.take(); n != 1 {
		t.Fatalf("a new refusal recorded %d events, want 1", n)
	}
	// Gone and back is new again.
	mustApply(t, inf, sources.Update{Source: "http", Pods: refused})
	mustApply(t, inf, http)
	if n := rec.take(); n != 1 {
		t.Fatalf("a refusal that went and came back recorded %d events, want 1", n)
	}
}

// A read failure is recorded when the outage starts and then once per
// RefusalResend, the local port of its connection left out of the
// message, so that its repeats are one event counting them.
func TestReadFailureEventsAreRateLimited(t *testing.T) {
	inf, st, rec, clk := eventInformer(t)
	fail := func(port int) sources.Update {
		return sources.Update{Source: "http", Err: fmt.Errorf("GET http://10.0.0.2/pods: read tcp 10.0.0.1:%d->10.0.0.2:80: read: connection reset by peer", port)}
	}
	for n := range 20 {
		clk.Step(10 * time.Second)
		_ = inf.Apply(fail(40000 + n))
	}
	if n := rec.take(); n != 1 {
		t.Fatalf("20 failed reads within a minute recorded %d events, want 1", n)
	}
	clk.Step(RefusalResend)
	_ = inf.Apply(fail(50000))
	rows, _ := st.Snapshot().Events(nil)
	if len(rows) != 1 || rows[0].Count != 2 || !strings.Contains(rows[0].Event.Message, "10.0.0.1->10.0.0.2:80") {
		t.Fatalf("rows %+v: want one event, its message without the local port, occurring twice", rows)
	}
	if err := inf.Apply(sources.Update{Source: "http", Err: errors.New("GET http://10.0.0.2/pods: 500 Internal Server Error")}); err != nil {
		t.Fatal(err)
	}
	if n := rec.take(); n != 1 {
		t.Fatalf("%d events, want 1 (the failure after RefusalResend)", n)
	}
}

// recorderFunc is a Recorder calling f.
type recorderFunc func(events.Event)

func (f recorderFunc) Record(e events.Event) { f(e) }

// Events are recorded after the update's write lets the next update in:
// a slow event sink never holds up the source informer.
func TestRefusalEventsRecordedOutsideTheApplyLock(t *testing.T) {
	inf, _, _, _ := eventInformer(t)
	held, n := 0, 0
	inf.Events = recorderFunc(func(events.Event) {
		n++
		if !inf.applyMu.TryLock() {
			held++
			return
		}
		inf.applyMu.Unlock()
	})
	mustApply(t, inf, sources.Update{Source: "file", Pods: []manifest.Desired{pod("a", "img:1", 8080), pod("b", "img:1", 8080)}})
	if n == 0 || held != 0 {
		t.Fatalf("%d of %d events recorded while the apply lock was held", held, n)
	}
}
