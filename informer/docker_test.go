package informer

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestDockerInformerFollowsEventsAndRelists(t *testing.T) {
	rt := runtime.NewFake(nil)
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
	waitFor(t, "initial list", inf.Synced)
	if c, _ := st.Container(nil, pre); c == nil || c.PodKey != "default/p" {
		t.Fatal("listed container missing")
	}
	if c, _ := st.Container(nil, other); c != nil {
		t.Fatal("another node's container entered the store")
	}

	id, _ := rt.CreateContainer(ctx, &runtime.ContainerConfig{Name: "new", Image: "img", Labels: labels("n1")})
	_ = rt.StartContainer(ctx, id)
	waitFor(t, "event-driven start", func() bool {
		c, _ := st.Container(nil, id)
		return c != nil && c.State == store.StateRunning
	})

	// The stream breaks; meanwhile a container disappears. The relist
	// must forget it even though its destroy event was never seen.
	rt.BreakEvents(errors.New("dockerd restarted"))
	rt.Remove(pre)
	waitFor(t, "relist after a broken stream", func() bool {
		c, _ := st.Container(nil, pre)
		return c == nil && rt.Subscribers() == 1
	})
	rt.Remove(id)
	waitFor(t, "destroy event", func() bool {
		c, _ := st.Container(nil, id)
		return c == nil
	})
}

// countingRuntime counts inspects on top of the fake engine.
type countingRuntime struct {
	*runtime.Fake
	inspects atomic.Int64
}

func (c *countingRuntime) InspectContainer(ctx context.Context, id string) (*store.Container, error) {
	c.inspects.Add(1)
	return c.Fake.InspectContainer(ctx, id)
}

func TestExecEventsCostNoInspect(t *testing.T) {
	fake := runtime.NewFake(nil)
	fake.AddImage("img")
	rt := &countingRuntime{Fake: fake}
	st, _ := store.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inf := NewDockerInformer(rt, st, "n1", nil, nil, nil)
	go inf.Run(ctx)
	waitFor(t, "initial list", inf.Synced)
	labels := map[string]string{runtime.LabelManaged: "true", runtime.LabelNode: "n1", runtime.LabelPodNamespace: "default", runtime.LabelPodName: "p"}
	id, _ := fake.CreateContainer(ctx, &runtime.ContainerConfig{Name: "c", Image: "img", Labels: labels})
	waitFor(t, "create seen", func() bool { c, _ := st.Container(nil, id); return c != nil })
	before := rt.inspects.Load()
	for i := 0; i < 10; i++ {
		fake.Emit(id, "exec_start")
	}
	_ = fake.StartContainer(ctx, id)
	waitFor(t, "start seen", func() bool { c, _ := st.Container(nil, id); return c.State == store.StateRunning })
	if n := rt.inspects.Load() - before; n != 1 {
		t.Fatalf("%d inspects for 10 exec events and a start, want 1", n)
	}
}
