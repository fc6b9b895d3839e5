package controller

import (
	"context"
	"errors"
	"reflect"
	"time"

	"github.com/berth-dev/berth/images"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

// observer writes what the engine says of single containers (an inspect,
// the answers of a create and a start) into the store, as of the event
// sequence read before the engine was asked, so a newer event wins.
type observer struct {
	store  *store.Store
	rt     runtime.Runtime
	images *images.Manager
}

// refresh writes the engine's view of id into the store, as of the event
// sequence before the inspect, so an event newer than the answer wins. An
// unchanged container is not written: the write would enqueue the pod again
// at once, past the rate limiter.
func (o *observer) refresh(ctx context.Context, id string) {
	at := o.store.Seq()
	ct, err := o.rt.InspectContainer(ctx, id)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		_ = o.store.DeleteContainer(id, at)
	case err == nil:
		if old, _ := o.store.Container(nil, id); old != nil && sameObservation(old, ct) {
			return
		}
		ct.Seq = at
		_, _ = o.store.UpsertContainer(ct)
	}
}

// sameObservation reports whether a and b describe the same state, whenever
// observed.
func sameObservation(a, b *model.Container) bool {
	x, y := *a, *b
	x.Seq, y.Seq = 0, 0
	return reflect.DeepEqual(&x, &y)
}

// observe writes what a create and a start call told of container id:
// created at t0 as of s0 (the clock and the event sequence before the create
// call) and, when the start succeeded, running since t1 as of s1 (both read
// before the start call). A newer event wins over it, except the create
// event itself: the start came after the creation it reports, so a row
// still created is made running.
func (o *observer) observe(id string, cfg *runtime.ContainerConfig, t0, t1 time.Time, s0, s1 uint64, startErr error) {
	ct := &model.Container{ID: id, DockerName: cfg.Name, Image: cfg.Image, State: model.StateCreated, CreatedAt: t0, Seq: s0}
	ct.ImageID, _ = o.images.ImageID(cfg.Image)
	runtime.FillFromLabels(ct, cfg.Labels)
	if startErr == nil {
		ct.State, ct.StartedAt, ct.Seq = model.StateRunning, t1, s1
	} else {
		ct.Error = startErr.Error()
	}
	if wrote, _ := o.store.UpsertContainer(ct); wrote || startErr != nil {
		return
	}
	// Refused: the engine's create event came in after s1 was read. The
	// row it wrote (created) is still older than this start, which the
	// engine answered after creating; only a newer state (the start or
	// die event) may stay. A row read here as created is replaced as of
	// its own sequence, so an event applied since refuses this write.
	if cur, _ := o.store.Container(nil, id); cur != nil && cur.State == model.StateCreated {
		_, _ = o.store.ApplyContainer(id, cur.Seq, func(old *model.Container) (*model.Container, bool) {
			if old == nil || old.State != model.StateCreated {
				return nil, false
			}
			cp := *old
			cp.State, cp.StartedAt, cp.Error = model.StateRunning, t1, ""
			return &cp, true
		})
	}
}

// started writes what a successful start of an existing container told: it
// ran since at, as of seq (the clock and the event sequence before the
// start call).
func (o *observer) started(id string, at time.Time, seq uint64) {
	_, _ = o.store.ApplyContainer(id, seq, func(old *model.Container) (*model.Container, bool) {
		if old == nil {
			return nil, false
		}
		cp := *old
		cp.State, cp.StartedAt, cp.FinishedAt, cp.ExitCode, cp.Error = model.StateRunning, at, time.Time{}, 0, ""
		return &cp, true
	})
}
