package main

// Observing berth: its process (RSS, fds, goroutines, CPU), and the
// engine's containers of its node against the ledger.

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/berth-dev/berth/bench/internal/benchkit"
)

// podCtrs are one pod's containers on the engine.
type podCtrs struct {
	sandboxes, apps []ctrInfo // running
	stopped         int       // not running
}

type ctrInfo struct {
	id       string
	restarts int
}

// group sorts the containers by pod name.
func group(list []container.Summary) map[string]*podCtrs {
	out := map[string]*podCtrs{}
	for _, c := range list {
		pod := c.Labels[podLabel]
		g := out[pod]
		if g == nil {
			g = &podCtrs{}
			out[pod] = g
		}
		if c.State != "running" {
			g.stopped++
			continue
		}
		rc, _ := strconv.Atoi(c.Labels[restartLabel])
		ci := ctrInfo{id: c.ID, restarts: rc}
		if c.Labels[ctrLabel] == sandboxName {
			g.sandboxes = append(g.sandboxes, ci)
		} else {
			g.apps = append(g.apps, ci)
		}
	}
	return out
}

func (g *podCtrs) running() int { return len(g.sandboxes) + len(g.apps) }

// diff is the containers against the ledger. Pods changed after cutoff are
// not judged (they may still be converging).
type diff struct {
	declared, settled            int
	runningPods, sandboxes, apps int
	stopped                      int
	orphanCtrs                   int
	orphanPods, missing, extra   []string
	hostileRan                   []string
}

func (s *soak) compare(groups map[string]*podCtrs, snap map[string]podView, cutoff time.Time) diff {
	var d diff
	for pod, g := range groups {
		d.stopped += g.stopped
		if g.running() == 0 {
			continue
		}
		d.runningPods++
		d.sandboxes += len(g.sandboxes)
		d.apps += len(g.apps)
		if s.hostilePod(pod) {
			d.hostileRan = append(d.hostileRan, pod)
		}
		v, ok := snap[pod]
		if !v.declared && (!ok || v.lastChange.Before(cutoff)) {
			d.orphanCtrs += g.running()
			d.orphanPods = append(d.orphanPods, pod)
		}
	}
	for pod, v := range snap {
		if !v.declared {
			continue
		}
		d.declared++
		if !v.lastChange.Before(cutoff) {
			continue
		}
		d.settled++
		g := groups[pod]
		switch {
		case g == nil || len(g.sandboxes) == 0 || len(g.apps) == 0:
			d.missing = append(d.missing, pod)
		case len(g.sandboxes) > 1 || len(g.apps) > 1:
			d.extra = append(d.extra, pod)
		}
	}
	for _, l := range [][]string{d.orphanPods, d.missing, d.extra, d.hostileRan} {
		sort.Strings(l)
	}
	return d
}

// sample is one row of the CSV.
type sample struct {
	at     time.Time
	t      float64 // seconds since the churn started (negative before)
	phase  string
	pid    int
	starts int
	state  string

	haveProc   bool
	rss        int64
	fds        int
	haveCPU    bool // a CPU share needs a previous sample of the same process
	cpuPct     float64
	haveGor    bool
	goroutines float64

	// counted: berth was up for -settle, so orphans and missing count.
	counted bool
	diff
	needless int // needless restarts so far
	ops      int // operations so far (the initial pod files not counted)
}

// restartEvent is a pod's containers replaced between two stable
// observations.
type restartEvent struct {
	at             time.Time
	pod            string
	what           string // app replaced, sandbox and app replaced, restart count rose
	oldGen, newGen string
	class          string
	needless       bool
	lastOp         string // the last operation on the pod's file and its age, or ""
	lastOpKind     string // of an "after an operation that kept the spec"
	acrossRestart  bool   // berth was started again in between
	sandboxOnly    bool
	sinceStableSec float64
}

// touchWindow: an operation on a pod's file this long before its last
// stable observation, or since, may be what replaced its containers (berth
// may have been stopped or down when it happened): the restart is then
// classed "after an operation that kept the spec", not "untouched".
const touchWindow = 10 * time.Second

// stableObs is a pod seen with exactly one running sandbox and app.
type stableObs struct {
	sandbox, app, gen string
	restarts          int
	at                time.Time
	starts            int
}

// observer samples berth and keeps what the report needs. Its methods are
// safe for concurrent use.
type observer struct {
	s      *soak
	clkTck int

	mu       sync.Mutex
	gens     map[string]string // app container ID → SOAK_GEN
	stable   map[string]stableObs
	samples  []sample
	restarts []restartEvent
	// changeSandbox, changeAppOnly: spec changes (a new generation) that
	// replaced the sandbox too, or the app alone.
	changeSandbox, changeAppOnly int
	changeSandboxPods            []string
	hostileRan                   map[string]time.Time // hostile or intruding pods seen running, first time
	lastTicks                    int64
	lastTicksAt                  time.Time
	lastPid                      int
	lastLine                     string // the last sample's differences logged
}

func newObserver(s *soak) *observer {
	return &observer{s: s, clkTck: benchkit.ClkTck(), gens: map[string]string{}, stable: map[string]stableObs{},
		hostileRan: map[string]time.Time{}}
}

// gen returns the SOAK_GEN of an app container (inspected once per ID).
func (o *observer) gen(ctx context.Context, id string) (string, bool) {
	o.mu.Lock()
	g, ok := o.gens[id]
	o.mu.Unlock()
	if ok {
		return g, true
	}
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	info, err := o.s.cli.ContainerInspect(ictx, id)
	if err != nil || info.Config == nil {
		return "", false
	}
	for _, kv := range info.Config.Env {
		if v, ok := strings.CutPrefix(kv, "SOAK_GEN="); ok {
			g = v
		}
	}
	o.mu.Lock()
	o.gens[id] = g
	o.mu.Unlock()
	return g, true
}

// take lists the containers, then snapshots the ledger (so every change
// the containers may reflect is in the snapshot), and records a sample.
func (o *observer) take(ctx context.Context, phase string, churnStart time.Time) {
	s := o.s
	listed := time.Now()
	list, err := s.listContainers(ctx)
	if err != nil {
		logf("sample: list containers: %v", err)
		return
	}
	snap := s.led.snapshot()
	ops := s.totalOps()
	s.mu.Lock()
	p, state, starts, upSince := s.proc, s.state, s.starts, s.upSince
	s.mu.Unlock()

	now := time.Now()
	smp := sample{at: now, t: now.Sub(churnStart).Seconds(), phase: phase, starts: starts, ops: ops,
		state: [...]string{"up", "down", "stopped"}[state]}
	if p != nil && !p.Exited() {
		smp.pid = p.Pid()
		if rss, fds, ticks, err := procStats(smp.pid); err == nil {
			smp.haveProc, smp.rss, smp.fds = true, rss, fds
			o.mu.Lock()
			if o.lastPid == smp.pid && now.After(o.lastTicksAt) {
				smp.haveCPU = true
				smp.cpuPct = 100 * float64(ticks-o.lastTicks) / float64(o.clkTck) / now.Sub(o.lastTicksAt).Seconds()
			}
			o.lastPid, o.lastTicks, o.lastTicksAt = smp.pid, ticks, now
			o.mu.Unlock()
		}
		if state == berthUp {
			smp.goroutines, smp.haveGor = p.Metric("go_goroutines", 2*time.Second)
		}
	}
	groups := group(list)
	cutoff := listed.Add(-s.opt.settle)
	smp.diff = s.compare(groups, snap, cutoff)
	smp.counted = state == berthUp && !upSince.After(cutoff)
	o.checkRestarts(ctx, groups, snap, starts, now)

	o.mu.Lock()
	for _, pod := range smp.hostileRan {
		if _, ok := o.hostileRan[pod]; !ok {
			o.hostileRan[pod] = now
		}
	}
	for _, r := range o.restarts {
		if r.needless {
			smp.needless++
		}
	}
	o.samples = append(o.samples, smp)
	o.mu.Unlock()
	if smp.counted {
		line := fmt.Sprintf("orphans %v, missing %v, extra %v", smp.orphanPods, smp.missing, smp.extra)
		o.mu.Lock()
		if line != o.lastLine {
			logf("sample t=%.0fs: %s", smp.t, line)
			o.lastLine = line
		}
		o.mu.Unlock()
	}
}

// checkRestarts compares each pod seen stable (one running sandbox, one
// running app) with its last stable observation: replaced containers of
// the same generation are a needless restart.
func (o *observer) checkRestarts(ctx context.Context, groups map[string]*podCtrs, snap map[string]podView, starts int, now time.Time) {
	for pod, g := range groups {
		if len(g.sandboxes) != 1 || len(g.apps) != 1 {
			continue
		}
		gen, ok := o.gen(ctx, g.apps[0].id)
		if !ok {
			continue
		}
		cur := stableObs{sandbox: g.sandboxes[0].id, app: g.apps[0].id, gen: gen, restarts: g.apps[0].restarts, at: now, starts: starts}
		o.mu.Lock()
		prev, seen := o.stable[pod]
		o.stable[pod] = cur
		if key := pod + " (a duplicate's spec)"; gen == intruderGen {
			if _, ok := o.hostileRan[key]; !ok {
				o.hostileRan[key] = now
			}
		}
		if !seen || (prev.sandbox == cur.sandbox && prev.app == cur.app && cur.restarts <= prev.restarts) {
			o.mu.Unlock()
			continue
		}
		ev := restartEvent{at: now, pod: pod, oldGen: prev.gen, newGen: gen, acrossRestart: prev.starts != starts,
			sinceStableSec: now.Sub(prev.at).Seconds()}
		switch {
		case prev.sandbox != cur.sandbox && prev.app != cur.app:
			ev.what = "sandbox and app replaced"
		case prev.sandbox != cur.sandbox:
			ev.what, ev.sandboxOnly = "sandbox replaced", true
		case prev.app != cur.app:
			ev.what = "app replaced"
		default:
			ev.what = "restart count rose"
		}
		v := snap[pod]
		touched := v.lastOp.After(prev.at.Add(-touchWindow))
		if !v.lastOp.IsZero() {
			ev.lastOp = v.lastOpKind + " " + now.Sub(v.lastOp).Round(100*time.Millisecond).String() + " before"
		}
		oldN, oldErr := strconv.Atoi(prev.gen)
		newN, newErr := strconv.Atoi(gen)
		switch {
		case gen == intruderGen && prev.gen != intruderGen:
			ev.class, ev.needless = "taken over by a duplicate file's spec", true
		case prev.gen == intruderGen:
			ev.class = "own spec restored after a duplicate's"
		case oldErr == nil && newErr == nil && newN < oldN:
			ev.class, ev.needless = "an older spec ran again", true
		case gen == prev.gen && !touched:
			ev.class, ev.needless = "untouched", true
		case gen == prev.gen:
			ev.class, ev.needless, ev.lastOpKind = "after an operation that kept the spec", true, v.lastOpKind
		default:
			ev.class = "spec changed"
			readd := false
			for _, g := range v.readds {
				readd = readd || (oldErr == nil && newErr == nil && g > oldN && g <= newN)
			}
			switch {
			case readd: // deleted and added again: a new sandbox is right
			case prev.sandbox != cur.sandbox:
				o.changeSandbox++
				o.changeSandboxPods = append(o.changeSandboxPods, pod)
			default:
				o.changeAppOnly++
			}
		}
		if ev.class != "spec changed" {
			o.restarts = append(o.restarts, ev)
			logf("restart of %s: %s, %s (gen %s → %s; last op: %s; across a berth restart: %v)",
				pod, ev.what, ev.class, ev.oldGen, ev.newGen, orNone(ev.lastOp), ev.acrossRestart)
		}
		o.mu.Unlock()
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// sampleLoop samples every -sample until ctx ends; phase names the phase.
func (o *observer) sampleLoop(ctx context.Context, churnStart time.Time, phase func() string) {
	t := time.NewTicker(o.s.opt.sample)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			o.take(ctx, phase(), churnStart)
		}
	}
}
