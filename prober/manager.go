package prober

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// Kind is the probe type.
type Kind string

const (
	Liveness  Kind = "liveness"
	Readiness Kind = "readiness"
	Startup   Kind = "startup"
)

// Result of a probe as the controller sees it.
type Result int

const (
	// Unknown: no verdict yet (initial delay, or never probed).
	Unknown Result = iota
	Success
	Failure
)

// Metrics counts probe results; metrics/ implements it.
type Metrics interface {
	ProbeResult(probe, result string)
}

type noMetrics struct{}

func (noMetrics) ProbeResult(string, string) {}

// Probed is one running container to probe.
type Probed struct {
	Target
	StartedAt time.Time
}

// Manager runs one worker per (container ID, probe kind) and keeps the
// latest verdicts. It calls notify(podKey) when a verdict changes; notify
// must not block.
type Manager struct {
	exec    *Executor
	clock   clock.WithTicker
	notify  func(podKey string)
	metrics Metrics

	mu      sync.Mutex
	ctx     context.Context
	workers map[workerKey]*worker
	byPod   map[string]map[workerKey]bool
}

type workerKey struct {
	id   string
	kind Kind
}

// NewManager probes through exec; workers live until ctx ends or their
// container stops being synced.
func NewManager(ctx context.Context, exec *Executor, clk clock.WithTicker, notify func(string), m Metrics) *Manager {
	if m == nil {
		m = noMetrics{}
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Manager{exec: exec, clock: clk, notify: notify, metrics: m, ctx: ctx,
		workers: map[workerKey]*worker{}, byPod: map[string]map[workerKey]bool{}}
}

func probeOf(c *v1.Container, k Kind) *v1.Probe {
	switch k {
	case Liveness:
		return c.LivenessProbe
	case Readiness:
		return c.ReadinessProbe
	default:
		return c.StartupProbe
	}
}

// Sync makes the workers of podKey exactly those for the probes of
// containers; workers of containers not listed stop.
func (m *Manager) Sync(podKey string, containers []Probed) {
	m.mu.Lock()
	defer m.mu.Unlock()
	want := map[workerKey]bool{}
	for _, c := range containers {
		for _, k := range []Kind{Startup, Liveness, Readiness} {
			p := probeOf(c.Spec, k)
			if p == nil {
				continue
			}
			key := workerKey{c.ContainerID, k}
			want[key] = true
			if _, ok := m.workers[key]; ok {
				continue
			}
			w := newWorker(m, podKey, key, c, p)
			m.workers[key] = w
			go w.run()
		}
	}
	for key := range m.byPod[podKey] {
		if !want[key] {
			m.workers[key].stop()
			delete(m.workers, key)
		}
	}
	if len(want) == 0 {
		delete(m.byPod, podKey)
	} else {
		m.byPod[podKey] = want
	}
}

// Result returns the verdict of probe kind for container id; Unknown when
// the container has no such probe worker.
func (m *Manager) Result(id string, kind Kind) Result {
	m.mu.Lock()
	w := m.workers[workerKey{id, kind}]
	m.mu.Unlock()
	if w == nil {
		return Unknown
	}
	return w.result()
}

type worker struct {
	m       *Manager
	podKey  string
	key     workerKey
	target  Probed
	probe   *v1.Probe
	ctx     context.Context
	cancel  context.CancelFunc
	mu      sync.Mutex
	verdict Result
	// consecutive results of the same outcome
	lastOK bool
	run1   int
}

func newWorker(m *Manager, podKey string, key workerKey, c Probed, p *v1.Probe) *worker {
	ctx, cancel := context.WithCancel(m.ctx)
	w := &worker{m: m, podKey: podKey, key: key, target: c, probe: p, ctx: ctx, cancel: cancel}
	if key.kind == Liveness {
		w.verdict = Success // a container is alive until proven otherwise
	}
	return w
}

func (w *worker) stop() { w.cancel() }

func (w *worker) result() Result {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.verdict
}

func seconds(n int32, def int32) time.Duration {
	if n <= 0 {
		n = def
	}
	return time.Duration(n) * time.Second
}

func (w *worker) run() {
	delay := time.Duration(w.probe.InitialDelaySeconds)*time.Second - w.m.clock.Since(w.target.StartedAt)
	if delay > 0 {
		select {
		case <-w.ctx.Done():
			return
		case <-w.m.clock.After(delay):
		}
	}
	t := w.m.clock.NewTicker(seconds(w.probe.PeriodSeconds, 10))
	defer t.Stop()
	for {
		if !w.probeOnce() {
			return
		}
		select {
		case <-w.ctx.Done():
			return
		case <-t.C():
		}
	}
}

// probeOnce runs the probe and updates the verdict; false once the worker
// has nothing more to do (a startup probe that succeeded).
func (w *worker) probeOnce() bool {
	// Liveness and readiness wait for the startup probe, as in Kubernetes.
	if w.key.kind != Startup && probeOf(w.target.Spec, Startup) != nil &&
		w.m.Result(w.key.id, Startup) != Success {
		return true
	}
	err := w.m.exec.Run(w.ctx, FromProbe(w.probe), w.target.Target, seconds(w.probe.TimeoutSeconds, 1))
	if w.ctx.Err() != nil {
		return false
	}
	ok := err == nil
	label := "success"
	if !ok {
		label = "failure"
	}
	w.m.metrics.ProbeResult(string(w.key.kind), label)

	w.mu.Lock()
	if ok == w.lastOK {
		w.run1++
	} else {
		w.lastOK, w.run1 = ok, 1
	}
	prev := w.verdict
	switch {
	case ok && w.run1 >= int(max(w.probe.SuccessThreshold, 1)):
		w.verdict = Success
	case !ok && w.run1 >= int(max(w.probe.FailureThreshold, 1)):
		w.verdict = Failure
	}
	changed := w.verdict != prev
	done := w.key.kind == Startup && w.verdict == Success
	w.mu.Unlock()
	if changed {
		w.m.notify(w.podKey)
	}
	return !done
}
