package images

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/internal/backoff"
	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/runtime"
)

// slowEngine has no image; its pulls report 3 MiB and take 2 s of clk.
type slowEngine struct{ clk *clocktesting.FakeClock }

func (slowEngine) InspectImage(context.Context, string) (runtime.ImageInfo, error) {
	return runtime.ImageInfo{}, fmt.Errorf("inspect: %w", runtime.ErrImageNotFound)
}

func (e slowEngine) PullImage(_ context.Context, _ string, _ *runtime.Credentials, progress func(runtime.PullProgress)) error {
	progress(runtime.PullProgress{Done: 3 << 20, Total: 3 << 20, Layers: 1, LayersDone: 1})
	e.clk.Step(2 * time.Second)
	return nil
}

// A pull logs a line when it starts and one when it is done, with the
// image, its size and how long it took.
func TestPullIsLogged(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rec := &recorder{}
	var logs testutil.SyncBuffer
	m := New(Config{Engine: slowEngine{clk}, Clock: clk, Backoff: backoff.Policy{Initial: 10 * time.Second, Max: time.Minute},
		Metrics: rec, Event: rec.event, Enqueue: rec.enqueue, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	ctr := &v1.Container{Name: "a", Image: "remote:1", ImagePullPolicy: v1.PullIfNotPresent}
	if ready, _, _, err := m.Ensure(context.Background(), "default/web", "uid/a", ctr, nil); ready || err != nil {
		t.Fatalf("Ensure of an absent image: ready %v err %v, want a pull", ready, err)
	}
	m.Wait()
	out := logs.String()
	for _, want := range []string{
		`msg="pulling image" image=remote:1 pod=default/web`,
		`msg="pulled image" image=remote:1 size=3.0MiB took=2s`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}
