package informer

import (
	"context"
	"testing"
	"time"

	"github.com/berth-dev/berth/runtime/fake"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

// Observations are ordered by the engine's event stream, not by clocks.
// While answers were stamped with berth's wall clock, a clock behind the
// engine's (berth's stepped back, or an engine on another host ahead) made
// every inspect older than the events already held: the sandbox IP, which no
// event carries, never reached the store, nor did any state an event missed.
func TestOrderingSurvivesClockSteps(t *testing.T) {
	base := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name          string
		berth, engine time.Duration // berth's step after the events; the engine's offset
	}{
		{"berth's clock stepped back an hour", -time.Hour, 0},
		{"engine's clock a day ahead", 0, 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			berth := clocktesting.NewFakeClock(base)
			rt := fake.New(func() time.Time { return base.Add(tc.engine) })
			rt.AddImage("img")
			st, _ := store.New(nil)
			inf := NewDockerInformer(rt, st, "n1", berth, nil, nil)
			inf.Relist = -1 // relists below are explicit
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go inf.Run(ctx)
			testutil.WaitFor(t, 5*time.Second, "initial list", inf.Synced)

			labels := map[string]string{runtime.LabelManaged: "true", runtime.LabelNode: "n1",
				runtime.LabelPodNamespace: "default", runtime.LabelPodName: "p", runtime.LabelContainerName: model.SandboxName}
			id, _ := rt.CreateContainer(ctx, &runtime.ContainerConfig{Name: "sandbox", Image: "img", Labels: labels})
			_ = rt.StartContainer(ctx, id)
			testutil.WaitFor(t, 5*time.Second, "start event applied", func() bool {
				c, _ := st.Container(nil, id)
				return c != nil && c.State == model.StateRunning
			})
			if c, _ := st.Container(nil, id); c.IP != "" {
				t.Fatalf("the events told the IP %q; the test needs an inspect to tell it", c.IP)
			}
			berth.SetTime(base.Add(tc.berth))
			// The list shows an IP the row lacks: the relist inspects.
			if err := inf.RelistNow(ctx); err != nil {
				t.Fatal(err)
			}
			if c, _ := st.Container(nil, id); c.IP == "" {
				t.Fatalf("the inspect after the events was refused: row %+v", c)
			}

			// And an answer the next event overtakes is still refused.
			sent := st.Seq()
			rt.Exit(id, 2)
			testutil.WaitFor(t, 5*time.Second, "die event applied", func() bool {
				c, _ := st.Container(nil, id)
				return c.State == model.StateExited
			})
			if ok, _ := st.UpsertContainer(&model.Container{ID: id, PodKey: "default/p", State: model.StateRunning, Seq: sent}); ok {
				t.Fatal("an answer older than the die event was taken")
			}
		})
	}
}

// A create or start call's answer can reach the store before the engine's
// "create" event does. The late event must not set a started container back
// to created: a reconcile reading "created" starts it again, and a container
// that meanwhile crashed restarts in place, past its backoff and its restart
// count. Create is the first event of a container, so on a held row it is
// old news.
func TestLateCreateEventDoesNotUndoAStart(t *testing.T) {
	started := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, state := range []string{model.StateRunning, model.StateExited} {
		old := &model.Container{ID: "c1", PodKey: "default/p", State: state, StartedAt: started, Seq: 3}
		next, write := applyEvent(old, runtime.Event{ContainerID: "c1", Action: "create", Time: started.Add(-time.Second),
			Attributes: map[string]string{"name": "berth_x"}})
		if write && next.State != state {
			t.Errorf("held %s: the late create event set the row to %s", state, next.State)
		}
		if old.State != state {
			t.Fatal("applyEvent modified the held row")
		}
	}
}
