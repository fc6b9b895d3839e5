package informer

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berth-dev/berth/runtime/fake"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

func TestDockerInformerFollowsEventsAndRelists(t *testing.T) {
	rt := fake.New(nil)
	rt.AddImage("img")
	st, _ := store.New(nil)
	labels := func(node string) map[string]string {
		return map[string]string{runtime.LabelManaged: "true", runtime.LabelNode: node,
			runtime.LabelPodNamespace: "default", runtime.LabelPodName: "p", runtime.LabelContainerName: "c"}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pre, _ := rt.CreateContainer(ctx, &runtime.ContainerConfig{Name: "pre", Image: "img", Labels: labels("n1")})
	other, _ := rt.CreateContainer(ctx, &runtime.ContainerConfig{Name: "other", Image: "img", Labels: labels("n2")})

	inf := NewDockerInformer(rt, st, "n1", nil, nil, nil)
	inf.Retry = 50 * time.Millisecond // the removal below falls in the gap
	go inf.Run(ctx)
	testutil.WaitFor(t, 5*time.Second, "initial list", inf.Synced)
	if c, _ := st.Container(nil, pre); c == nil || c.PodKey != "default/p" {
		t.Fatal("listed container missing")
	}
	if c, _ := st.Container(nil, other); c != nil {
		t.Fatal("another node's container entered the store")
	}

	id, _ := rt.CreateContainer(ctx, &runtime.ContainerConfig{Name: "new", Image: "img", Labels: labels("n1")})
	_ = rt.StartContainer(ctx, id)
	testutil.WaitFor(t, 5*time.Second, "event-driven start", func() bool {
		c, _ := st.Container(nil, id)
		return c != nil && c.State == model.StateRunning
	})

	// The stream breaks; meanwhile a container disappears. The relist
	// must forget it even though its destroy event was never seen.
	rt.BreakEvents(errors.New("dockerd restarted"))
	rt.Remove(pre)
	testutil.WaitFor(t, 5*time.Second, "relist after a broken stream", func() bool {
		c, _ := st.Container(nil, pre)
		return c == nil && rt.Subscribers() == 1
	})
	rt.Remove(id)
	testutil.WaitFor(t, 5*time.Second, "destroy event", func() bool {
		c, _ := st.Container(nil, id)
		return c == nil
	})
}

// countingRuntime counts inspects on top of the fake engine.
type countingRuntime struct {
	*fake.Runtime
	inspects atomic.Int64
}

func (c *countingRuntime) InspectContainer(ctx context.Context, id string) (*model.Container, error) {
	c.inspects.Add(1)
	return c.Runtime.InspectContainer(ctx, id)
}

func TestEventsCostNoInspect(t *testing.T) {
	eng := fake.New(nil)
	eng.AddImage("img")
	rt := &countingRuntime{Runtime: eng}
	var notified atomic.Int64
	st, _ := store.New(func(string) { notified.Add(1) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inf := NewDockerInformer(rt, st, "n1", nil, nil, nil)
	go inf.Run(ctx)
	testutil.WaitFor(t, 5*time.Second, "initial list", inf.Synced)
	labels := map[string]string{runtime.LabelManaged: "true", runtime.LabelNode: "n1", runtime.LabelPodNamespace: "default",
		runtime.LabelPodName: "p", runtime.LabelContainerName: "c", runtime.LabelRestartCount: "3"}
	id, _ := eng.CreateContainer(ctx, &runtime.ContainerConfig{Name: "berth_c", Image: "img", Labels: labels})
	testutil.WaitFor(t, 5*time.Second, "create seen", func() bool { c, _ := st.Container(nil, id); return c != nil })
	before := notified.Load()
	for i := 0; i < 10; i++ {
		eng.Emit(id, "exec_start")
	}
	_ = eng.StartContainer(ctx, id)
	testutil.WaitFor(t, 5*time.Second, "start seen", func() bool { c, _ := st.Container(nil, id); return c.State == model.StateRunning })
	if n := notified.Load() - before; n != 1 {
		t.Fatalf("10 exec events and a start notified the pod %d times, want 1 (exec events change nothing)", n)
	}
	eng.Exit(id, 3)
	testutil.WaitFor(t, 5*time.Second, "die seen", func() bool { c, _ := st.Container(nil, id); return c.State == model.StateExited })
	c, _ := st.Container(nil, id)
	if c.ExitCode != 3 || c.PodKey != "default/p" || c.Name != "c" || c.RestartCount != 3 || c.DockerName != "berth_c" || c.Image != "img" ||
		c.StartedAt.IsZero() || c.FinishedAt.IsZero() || c.Seq == 0 {
		t.Fatalf("row built from events: %+v", c)
	}
	if n := rt.inspects.Load(); n != 0 {
		t.Fatalf("%d inspects for create, 10 exec events, start and die, want 0", n)
	}
}

// dropping loses every event of one action, as a stream that missed it.
type dropping struct {
	*fake.Runtime
	action  string
	dropped atomic.Int32
}

func (d *dropping) Events(ctx context.Context, match map[string]string) (<-chan runtime.Event, <-chan error) {
	in, errs := d.Runtime.Events(ctx, match)
	out := make(chan runtime.Event)
	go func() {
		defer close(out)
		for ev := range in {
			if ev.Action == d.action {
				d.dropped.Add(1)
				continue
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, errs
}

// The periodic relist is the safety net for what the stream missed; on a
// healthy node it costs one list and no inspect.
func TestPeriodicRelistRepairsAMissedEvent(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	eng := fake.New(clk.Now)
	eng.AddImage("img")
	counting := &countingRuntime{Runtime: eng}
	rt := &dropping{Runtime: eng, action: "die"}
	st, _ := store.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	labels := map[string]string{runtime.LabelManaged: "true", runtime.LabelNode: "n1", runtime.LabelPodNamespace: "default", runtime.LabelPodName: "p"}
	id, _ := eng.CreateContainer(ctx, &runtime.ContainerConfig{Name: "c", Image: "img", Labels: labels})
	_ = eng.StartContainer(ctx, id)
	inf := NewDockerInformer(&struct {
		*dropping
		inspector
	}{rt, counting}, st, "n1", clk, nil, nil)
	inf.Relist = time.Minute
	go inf.Run(ctx)
	testutil.WaitFor(t, 5*time.Second, "initial list", inf.Synced)
	testutil.WaitFor(t, 5*time.Second, "relist ticker", func() bool { return clk.HasWaiters() })

	lists := eng.CallCount("ListContainers")
	inspects := counting.inspects.Load()
	clk.Step(time.Minute)
	testutil.WaitFor(t, 5*time.Second, "healthy relist", func() bool { return eng.CallCount("ListContainers") == lists+1 })
	// Relists run one after another: the second's list means the first,
	// inspects included, is over.
	clk.Step(time.Minute)
	testutil.WaitFor(t, 5*time.Second, "second relist", func() bool { return eng.CallCount("ListContainers") == lists+2 })
	if n := counting.inspects.Load() - inspects; n != 0 {
		t.Fatalf("a relist of an up-to-date cache inspected %d containers", n)
	}

	eng.Exit(id, 2) // its die event is lost
	testutil.WaitFor(t, 5*time.Second, "die event dropped", func() bool { return rt.dropped.Load() == 1 })
	if c, _ := st.Container(nil, id); c.State != model.StateRunning {
		t.Fatalf("test broken: the die event arrived (%s)", c.State)
	}
	clk.Step(time.Minute)
	testutil.WaitFor(t, 5*time.Second, "relist repair", func() bool {
		c, _ := st.Container(nil, id)
		return c.State == model.StateExited && c.ExitCode == 2
	})
}

// inspector is the part of the runtime that countingRuntime overrides.
type inspector interface {
	InspectContainer(ctx context.Context, id string) (*model.Container, error)
}
