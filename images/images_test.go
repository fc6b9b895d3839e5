package images

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/internal/backoff"
	"github.com/berth-dev/berth/runtime"
)

// panickyEngine has no image, and its pulls panic.
type panickyEngine struct{}

func (panickyEngine) InspectImage(context.Context, string) (runtime.ImageInfo, error) {
	return runtime.ImageInfo{}, fmt.Errorf("inspect: %w", runtime.ErrImageNotFound)
}

func (panickyEngine) PullImage(context.Context, string, *runtime.Credentials, func(runtime.PullProgress)) error {
	panic("registry client bug")
}

// recorder keeps what a Manager reports.
type recorder struct {
	mu       sync.Mutex
	results  []string
	events   []string
	enqueued []string
}

func (r *recorder) ImagePulled(result string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.results = append(r.results, result)
}

func (r *recorder) event(podKey, _, container, typ, reason, format string, args ...interface{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, reason+" "+podKey+"/"+container+": "+fmt.Sprintf(format, args...))
}

func (r *recorder) enqueue(podKey string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.enqueued = append(r.enqueued, podKey)
}

// A pull that panics is a failed pull: counted, reported, backed off and
// its pod enqueued, while berth goes on.
func TestPanickingPullFails(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rec := &recorder{}
	m := New(Config{Engine: panickyEngine{}, Clock: clk, Backoff: backoff.Policy{Initial: 10 * time.Second, Max: time.Minute},
		Metrics: rec, Event: rec.event, Enqueue: rec.enqueue})
	ctr := &v1.Container{Name: "a", Image: "remote:1", ImagePullPolicy: v1.PullIfNotPresent}
	ready, wait, _, err := m.Ensure(context.Background(), "default/web", "uid/a", ctr, nil)
	if ready || err != nil || wait.Reason != "ContainerCreating" {
		t.Fatalf("Ensure of an absent image: ready %v wait %+v err %v, want a pull", ready, wait, err)
	}
	m.Wait()
	st := m.State("uid/a")
	if st.Pulling || !strings.Contains(st.Err, "registry client bug") || !st.RetryAt.Equal(clk.Now().Add(10*time.Second)) {
		t.Errorf("state after the panic %+v, want a failure retried after 10s", st)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.results) != 1 || rec.results[0] != "failure" {
		t.Errorf("pulls counted %v, want one failure", rec.results)
	}
	if len(rec.events) != 2 || !strings.HasPrefix(rec.events[1], "Failed default/web/a") {
		t.Errorf("events %v, want Pulling then Failed", rec.events)
	}
	if len(rec.enqueued) != 1 || rec.enqueued[0] != "default/web" {
		t.Errorf("enqueued %v, want the pod", rec.enqueued)
	}
}
