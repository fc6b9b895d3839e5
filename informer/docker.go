package informer

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/internal/backoff"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

// DefaultRelist is how often a DockerInformer relists the engine while its
// event stream is healthy.
const DefaultRelist = 5 * time.Minute

// DefaultRetryMax is the longest pause between two attempts to reach an
// engine that does not answer.
const DefaultRetryMax = 30 * time.Second

// DockerInformer keeps the store's containers table equal to the engine's
// managed containers of this node: a list at start and after every broken
// event stream, the events in between (applied as they come, with no
// inspect), and a periodic cheap relist as the safety net, as the kubelet's
// PLEG is for its cache. Events go in as the stream orders them; every
// inspect and list answer is stamped with the store's event sequence read
// before it was asked, so the store refuses an answer that an event for the
// same container overtook (no clock orders anything).
type DockerInformer struct {
	rt      runtime.Runtime
	store   *store.Store
	match   map[string]string
	clock   clock.WithTicker
	metrics Metrics
	log     *slog.Logger
	// Retry is the first pause before reconnecting; it doubles on every
	// failed attempt up to RetryMax and is back to Retry once a list
	// succeeds. Set them before Run.
	Retry    time.Duration
	RetryMax time.Duration
	// Host names the engine in log lines (docker.host).
	Host string
	// retry spaces the reconnections; only Run's goroutine uses it.
	retry *backoff.Tracker
	// Relist is the period of the safety-net relist (DefaultRelist when
	// zero, never when negative). Set it before Run.
	Relist time.Duration
	synced atomic.Bool
	// listedSeq is the Seq before the previous complete list: deletions
	// older than it are pruned after the next list.
	listedSeq uint64
}

// NewDockerInformer follows containers labelled managed and with node.
func NewDockerInformer(rt runtime.Runtime, st *store.Store, node string, clk clock.WithTicker, m Metrics, log *slog.Logger) *DockerInformer {
	if m == nil {
		m = noMetrics{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &DockerInformer{
		rt: rt, store: st, clock: clk, metrics: m, log: log.With("component", "docker-informer"),
		match: map[string]string{runtime.LabelManaged: "true", runtime.LabelNode: node},
		Retry: time.Second, RetryMax: DefaultRetryMax,
	}
}

// Synced reports whether the current connection has completed its list.
func (d *DockerInformer) Synced() bool { return d.synced.Load() }

// Run lists and watches until ctx ends, reconnecting on any error after a
// pause that doubles while the engine cannot be reached. Each failed
// attempt logs one line naming the next pause.
func (d *DockerInformer) Run(ctx context.Context) {
	d.retry = backoff.New(backoff.Policy{Initial: d.Retry, Max: max(d.RetryMax, d.Retry)}, d.clock)
	for ctx.Err() == nil {
		err := d.watch(ctx)
		listed := d.synced.Swap(false)
		if ctx.Err() != nil {
			return
		}
		delay := d.retry.Failed(retryKey)
		d.metrics.DockerStreamRestart()
		if listed {
			d.log.Warn("docker event stream broken, relisting", "host", d.host(), "err", err, "retry", delay)
		} else {
			d.log.Warn("cannot connect to Docker at "+d.host(), "err", err, "retry", delay)
		}
		select {
		case <-ctx.Done():
			return
		case <-d.clock.After(delay):
		}
	}
}

const retryKey = "docker"

func (d *DockerInformer) host() string {
	if d.Host == "" {
		return "the default host"
	}
	return d.Host
}

// connected ends a series of failed attempts: the next failure waits Retry.
func (d *DockerInformer) connected() {
	if d.retry == nil {
		return
	}
	if _, failed := d.retry.Delay(retryKey); failed {
		d.log.Info("connected to Docker at " + d.host())
		d.retry.Reset(retryKey)
	}
}

// watch subscribes first and lists second, so no event between the two is
// lost; an event the list already reflects applies again, in stream order,
// and leaves the row as the list found it.
func (d *DockerInformer) watch(ctx context.Context) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, errs := d.rt.Events(wctx, d.match)
	if err := d.RelistNow(ctx); err != nil {
		return err
	}
	d.synced.Store(true)
	d.connected()
	var tick <-chan time.Time
	if every := d.relistEvery(); every > 0 {
		t := d.clock.NewTicker(every)
		defer t.Stop()
		tick = t.C()
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick:
			if err := d.RelistNow(ctx); err != nil {
				return err
			}
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
			d.apply(ev)
		}
	}
}

func (d *DockerInformer) relistEvery() time.Duration {
	if d.Relist == 0 {
		return DefaultRelist
	}
	return d.Relist
}

// apply writes what ev tells into the store; actions that change nothing
// the store holds (kill, exec_*, health_status, ...) write nothing.
func (d *DockerInformer) apply(ev runtime.Event) {
	_, err := d.store.ApplyEvent(ev.ContainerID, func(old *model.Container) (*model.Container, bool) {
		return applyEvent(old, ev)
	})
	if err != nil {
		d.log.Warn("applying event", "id", ev.ContainerID, "action", ev.Action, "err", err)
	}
}

// applyEvent returns the row for ev's container after ev, given the row
// before it (nil when none), and whether ev changes it: nil means deleted.
// It never modifies old.
func applyEvent(old *model.Container, ev runtime.Event) (*model.Container, bool) {
	switch ev.Action {
	case "destroy":
		return nil, true
	case "create", "start", "die", "oom", "pause", "unpause", "rename":
	default: // kill, stop, exec_*, attach, health_status, ...: no state change
		return nil, false
	}
	var c model.Container
	switch {
	case old != nil && ev.Action == "create":
		// A container's first event, behind a call's answer already held:
		// applied, it would set a started container back to created.
		return nil, false
	case old != nil:
		c = *old
	case ev.Action != "create" && ev.Action != "start" && ev.Action != "die":
		return nil, false // nothing to amend; the relist will tell
	default:
		labels := make(map[string]string, len(ev.Attributes))
		for k, v := range ev.Attributes {
			if k != "name" && k != "image" && k != "exitCode" && k != "signal" && k != "execDuration" {
				labels[k] = v
			}
		}
		c = model.Container{ID: ev.ContainerID, State: model.StateCreated, DockerName: ev.Attributes["name"], Image: ev.Attributes["image"]}
		runtime.FillFromLabels(&c, labels)
	}
	switch ev.Action {
	case "create":
		c.State, c.CreatedAt = model.StateCreated, ev.Time
	case "start":
		c.State, c.StartedAt, c.FinishedAt, c.ExitCode, c.OOMKilled, c.Error = model.StateRunning, ev.Time, time.Time{}, 0, false, ""
	case "die":
		c.State, c.FinishedAt = model.StateExited, ev.Time
		c.ExitCode, _ = strconv.Atoi(ev.Attributes["exitCode"])
	case "oom":
		c.OOMKilled = true
	case "pause":
		c.State = model.StatePaused
	case "unpause":
		c.State = model.StateRunning
	case "rename":
		if n := ev.Attributes["name"]; n != "" {
			c.DockerName = n
		}
	}
	return &c, true
}

// inspect writes the engine's complete view of id, as of the event sequence
// before the request.
func (d *DockerInformer) inspect(ctx context.Context, id string) {
	at := d.store.Seq()
	c, err := d.rt.InspectContainer(ctx, id)
	switch {
	case errors.Is(err, runtime.ErrNotFound):
		_ = d.store.DeleteContainer(id, at)
	case err != nil:
		if ctx.Err() == nil {
			d.log.Warn("inspect failed", "id", id, "err", err)
		}
	default:
		c.Seq = at
		_, _ = d.store.UpsertContainer(c)
	}
}

// RelistNow makes the store agree with one list of the engine: containers
// the store does not know, or knows in another state, are inspected (a list
// lacks exit codes and times), and so are known containers absent from the
// list (one may have been created while the list was taken). On a healthy
// node it costs the list alone.
//
// Not safe for concurrent use with itself: Run calls it, or a test before
// Run.
func (d *DockerInformer) RelistNow(ctx context.Context) error {
	at := d.store.Seq()
	list, err := d.rt.ListContainers(ctx, d.match)
	if err != nil {
		return err
	}
	known, err := d.store.Containers(nil)
	if err != nil {
		return err
	}
	byID := make(map[string]*model.Container, len(known))
	for _, k := range known {
		byID[k.ID] = k
	}
	listed := make(map[string]bool, len(list))
	stale := 0
	for _, s := range list {
		listed[s.ID] = true
		if k := byID[s.ID]; k != nil && k.State == s.State && (k.IP != "" || s.IP == "") {
			continue
		}
		stale++
		d.inspect(ctx, s.ID)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	for _, k := range known {
		if !listed[k.ID] {
			stale++
			d.inspect(ctx, k.ID)
		}
	}
	if len(known) > 0 && stale > 0 {
		d.log.Info("relist found the container cache out of date", "listed", len(list), "inspected", stale)
	}
	// Deletions are remembered one list longer than a list supersedes
	// them: an answer asked for before this list may still be on its way.
	prev := d.listedSeq
	d.listedSeq = at
	return d.store.PruneTombstones(prev)
}
