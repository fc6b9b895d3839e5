package prober

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/runtime"
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

// Probe names one probe of one container, the identity of its series.
// Workers of successive instances of a container share it.
type Probe struct {
	Kind      Kind
	Container string
	Pod       string
	Namespace string
	PodUID    string
}

// Metrics counts probe results per container; metrics/ implements it and
// the prober stays unaware of Prometheus. Neither method may block or call
// back into the Manager.
type Metrics interface {
	// ProbeResult counts one probe run of p that ended in r (Unknown: no
	// verdict, the run is not counted towards the thresholds) after took.
	ProbeResult(p Probe, r Result, took time.Duration)
	// ProbeStopped says that no worker probes p any more: its series go.
	// A later worker of p starts them anew.
	ProbeStopped(p Probe)
}

type noMetrics struct{}

func (noMetrics) ProbeResult(Probe, Result, time.Duration) {}
func (noMetrics) ProbeStopped(Probe)                       {}

// Probed is one running container to probe.
type Probed struct {
	Target
	StartedAt time.Time
	// PodUID is the pod's metadata.uid, for the series' pod_uid label.
	PodUID string
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
	// live counts the running worker goroutines of each Probe, so its
	// series go only when the last one ends (a restarted container's new
	// worker may start before the old one has ended).
	live map[Probe]int
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
		workers: map[workerKey]*worker{}, byPod: map[string]map[workerKey]bool{}, live: map[Probe]int{}}
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
			m.live[w.id]++
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

// workerDone forgets a worker goroutine of p; the last one of p takes its
// series along. Under m.mu, so that a new worker of p cannot count between
// the decision and the deletion.
func (m *Manager) workerDone(p Probe) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.live[p]--; m.live[p] > 0 {
		return
	}
	delete(m.live, p)
	m.metrics.ProbeStopped(p)
}

type worker struct {
	m       *Manager
	podKey  string
	key     workerKey
	id      Probe
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
	ns, name, _ := strings.Cut(podKey, "/")
	id := Probe{Kind: key.kind, Container: c.Spec.Name, Pod: name, Namespace: ns, PodUID: c.PodUID}
	w := &worker{m: m, podKey: podKey, key: key, id: id, target: c, probe: p, ctx: ctx, cancel: cancel}
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

// run probes until the worker is stopped; a startup probe that succeeded
// stops probing but keeps its series until then.
func (w *worker) run() {
	defer w.m.workerDone(w.id)
	w.probeLoop()
	<-w.ctx.Done()
}

func (w *worker) probeLoop() {
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
	start := w.m.clock.Now()
	err := w.m.exec.Run(w.ctx, FromProbe(w.probe), w.target.Target, seconds(w.probe.TimeoutSeconds, 1))
	if w.ctx.Err() != nil {
		return false
	}
	took := w.m.clock.Since(start)
	if errors.Is(err, runtime.ErrNotFound) {
		// The container is gone, not unhealthy: no verdict, as the kubelet
		// throws away a prober error. Its worker is stopped on the next sync.
		w.m.metrics.ProbeResult(w.id, Unknown, took)
		return true
	}
	ok := err == nil
	res := Success
	if !ok {
		res = Failure
	}
	w.m.metrics.ProbeResult(w.id, res, took)

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
