package informer

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

// DockerInformer keeps the store's containers table equal to the engine's
// managed containers of this node: a full list at start and after every
// broken event stream, and an inspect per event in between.
type DockerInformer struct {
	rt      runtime.Runtime
	store   *store.Store
	match   map[string]string
	clock   clock.WithTicker
	metrics Metrics
	log     *slog.Logger
	// Retry is the pause before reconnecting a broken stream.
	Retry  time.Duration
	synced atomic.Bool
}

// NewDockerInformer follows containers labelled managed and with node.
func NewDockerInformer(rt runtime.Runtime, st *store.Store, node string, clk clock.WithTicker, m Metrics, log *slog.Logger) *DockerInformer {
	if m == nil {
		m = noMetrics{}
	}
	if log == nil {
		log = slog.Default()
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &DockerInformer{
		rt: rt, store: st, clock: clk, metrics: m, log: log.With("component", "docker-informer"),
		match: map[string]string{runtime.LabelManaged: "true", runtime.LabelNode: node},
		Retry: time.Second,
	}
}

// Synced reports whether the current connection has completed its list.
func (d *DockerInformer) Synced() bool { return d.synced.Load() }

// Run lists and watches until ctx ends, reconnecting on any error.
func (d *DockerInformer) Run(ctx context.Context) {
	first := true
	for ctx.Err() == nil {
		if !first {
			d.metrics.DockerStreamRestart()
			select {
			case <-ctx.Done():
				return
			case <-d.clock.After(d.Retry):
			}
		}
		first = false
		err := d.watch(ctx)
		d.synced.Store(false)
		if ctx.Err() == nil {
			d.log.Warn("docker event stream broken, relisting", "err", err)
		}
	}
}

// watch subscribes first and lists second, so no event between the two is
// lost; events then re-inspect their container.
func (d *DockerInformer) watch(ctx context.Context) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, errs := d.rt.Events(wctx, d.match)
	if err := d.Relist(ctx); err != nil {
		return err
	}
	d.synced.Store(true)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-errs:
			if err == nil {
				err = errors.New("event stream closed")
			}
			return err
		case ev, ok := <-events:
			if !ok {
				select {
				case err := <-errs:
					if err != nil {
						return err
					}
				default:
				}
				return errors.New("event stream closed")
			}
			d.metrics.DockerEvent(ev.Action)
			if stateChanging[ev.Action] {
				d.sync(ctx, ev.ContainerID)
			}
		}
	}
}

// stateChanging are the event actions after which a container's state may
// differ. Others (exec_*, attach, resize, top, health_status, ...) are only
// counted: exec probes would otherwise cost three inspects per probe run.
var stateChanging = map[string]bool{
	"create": true, "start": true, "restart": true, "die": true, "kill": true, "oom": true, "stop": true,
	"pause": true, "unpause": true, "destroy": true, "rename": true, "update": true,
}

// Relist replaces the store's containers with a fresh list from the engine.
//
// A container in the store but not in the list may have been created (and
// written to the store by the controller) after the list was taken; it is
// inspected again rather than forgotten, or the controller would create a
// duplicate of it.
func (d *DockerInformer) Relist(ctx context.Context) error {
	cs, err := d.rt.ListContainers(ctx, d.match)
	if err != nil {
		return err
	}
	listed := make(map[string]bool, len(cs))
	for _, c := range cs {
		listed[c.ID] = true
	}
	known, err := d.store.Containers(nil)
	if err != nil {
		return err
	}
	for _, k := range known {
		if listed[k.ID] {
			continue
		}
		c, err := d.rt.InspectContainer(ctx, k.ID)
		switch {
		case errors.Is(err, runtime.ErrNotFound):
		case err != nil:
			return err
		default:
			cs = append(cs, c)
		}
	}
	return d.store.ReplaceContainers(cs)
}

func (d *DockerInformer) sync(ctx context.Context, id string) {
	c, err := d.rt.InspectContainer(ctx, id)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		_ = d.store.DeleteContainer(id)
	case err != nil:
		d.log.Warn("inspect failed", "id", id, "err", err)
	default:
		_ = d.store.UpsertContainer(c)
	}
}
