package main

// The run: initial pods, the churn with its faults (kill -9s, one
// SIGSTOP, hostile files), then convergence once the churn stops.

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/berth-dev/berth/bench/internal/benchkit"
)

// killModes are what happens around each kill -9, in turn.
var killModes = []string{
	"restarted at once",
	"a pod file deleted while down",
	"a pod file added while down",
	"a pod file deleted 0.5 s after the restart",
}

// killResult is one kill -9 and berth's restart.
type killResult struct {
	at         time.Time
	mode       string
	pod        string        // the pod file deleted or added, if any
	readyAfter time.Duration // from the kill to /readyz 200 again
	// orphans and missing: 2 s (-settle) after /readyz, pods whose
	// containers run though no file declares them, and declared pods
	// without a running sandbox and app.
	orphans, missing []string
	// cleared: from /readyz until the orphans' containers were gone (0:
	// none, or not seen gone within 3 minutes: clearedNot).
	cleared    time.Duration
	clearedNot bool
}

// stopResult is the one SIGSTOP.
type stopResult struct {
	at  time.Time
	dur time.Duration
	ops int // operations done while berth was stopped
}

func (s *soak) soak(ctx context.Context) error {
	s.led.mu.Lock()
	for i := 0; i < s.opt.pods; i++ {
		if err := s.opAdd(nil, "initial"); err != nil {
			s.led.mu.Unlock()
			return err
		}
	}
	s.led.mu.Unlock()
	t0 := time.Now()
	p, err := s.startBerth()
	if err != nil {
		return err
	}
	if _, err := s.waitReady(ctx, p, 2*time.Minute); err != nil {
		return err
	}
	logf("berth ready; waiting for the %d initial pods", s.opt.pods)
	if s.res.initial, _, _, err = s.waitExact(ctx, t0, 5*time.Minute, 0); err != nil {
		return fmt.Errorf("initial pods: %w", err)
	}
	logf("initial pods running after %s; churn for %s", s.res.initial.Round(time.Millisecond), s.opt.duration)

	start := time.Now()
	s.res.churnStart = start
	var phase atomic.Value
	phase.Store("churn")
	sctx, stopSampling := context.WithCancel(ctx)
	var sampling sync.WaitGroup
	sampling.Add(1)
	go func() {
		defer sampling.Done()
		s.obs.sampleLoop(sctx, start, func() string { return phase.Load().(string) })
	}()
	defer func() {
		stopSampling()
		sampling.Wait()
	}()

	// bg: the kill checks' orphan watches (which may outlast the churn)
	// and the SIGSTOP.
	var bg sync.WaitGroup
	defer bg.Wait()
	if err := s.churn(ctx, start, &bg); err != nil {
		return err
	}
	s.res.churnEnd = time.Now()
	phase.Store("converge")
	<-s.stopDone
	s.removeHostile(true)
	s.led.mu.Lock()
	last := s.led.lastFileChange
	s.led.mu.Unlock()
	logf("churn over (%d operations); waiting for convergence", s.totalOps())
	conv, breaks, why, err := s.waitExact(ctx, last, s.opt.convergeTimeout, 5*time.Second)
	s.res.convergence, s.res.convergeBreaks = conv, breaks
	if err != nil {
		s.res.convergeErr = err.Error() + " (last: " + why + ")"
		logf("no convergence: %v", s.res.convergeErr)
	} else {
		logf("converged %s after the last change", conv.Round(time.Millisecond))
	}
	s.obs.take(ctx, "end", start)
	if list, err := s.listContainers(ctx); err == nil {
		for _, g := range group(list) {
			s.res.stoppedAtEnd += g.stopped
		}
	}
	s.scanLog()
	return nil
}

// churn does one operation every -interval until -duration has passed,
// with the kills, the SIGSTOP and the hostile files at their times.
func (s *soak) churn(ctx context.Context, start time.Time, bg *sync.WaitGroup) error {
	d, iv := s.opt.duration, s.opt.interval
	end := start.Add(d)
	var kills, hostile []time.Time
	for i := 0; i < s.opt.kills; i++ {
		kills = append(kills, start.Add(d*time.Duration(2*i+1)/time.Duration(2*s.opt.kills)))
	}
	for j := 0; j < s.opt.hostile; j++ {
		hostile = append(hostile, start.Add(d*time.Duration(4*j+1)/time.Duration(4*s.opt.hostile)))
	}
	stopAt := s.stopTime(start, kills)
	nk, nh, stopped := 0, 0, false
	defer func() {
		if !stopped { // never stopped: nothing to wait for
			close(s.stopDone)
		}
	}()
	if s.opt.stopFor == 0 {
		stopAt = end
	}
	for n := 1; ; n++ {
		next := start.Add(time.Duration(n) * iv)
		if behind := time.Since(next); behind > 0 { // a kill took longer than a slot
			n += int(behind / iv)
			continue
		}
		if !next.Before(end) {
			return nil
		}
		if err := sleepUntil(ctx, next); err != nil {
			return err
		}
		s.removeHostile(false)
		if err := s.checkCrash(ctx); err != nil {
			return err
		}
		now := time.Now()
		var err error
		switch {
		case nk < len(kills) && !now.Before(kills[nk]):
			if stopped {
				<-s.stopDone // never kill a stopped berth
			}
			err = s.killRestart(ctx, nk, bg)
			nk++
		case nh < len(hostile) && !now.Before(hostile[nh]):
			err = s.hostileOp(nh)
			nh++
		default:
			if !stopped && !now.Before(stopAt) {
				stopped = true
				bg.Add(1)
				go s.stopCont(ctx, bg)
			}
			err = s.randomOp(n)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if strings.HasPrefix(err.Error(), "hostile") {
				logf("%v", err)
				s.res.errors = append(s.res.errors, err.Error())
				continue
			}
			return err
		}
	}
}

// stopTime places the SIGSTOP at 40 % of the run, or at 60, 20 or 80 %,
// whichever is first at least 20 s from every kill.
func (s *soak) stopTime(start time.Time, kills []time.Time) time.Time {
	d := s.opt.duration
	for _, f := range []int{40, 60, 20, 80} {
		t := start.Add(d * time.Duration(f) / 100)
		ok := true
		for _, k := range kills {
			if gap := t.Sub(k); gap > -20*time.Second && gap < 20*time.Second+s.opt.stopFor {
				ok = false
			}
		}
		if ok {
			return t
		}
	}
	return start.Add(d * 40 / 100)
}

// stopCont holds berth with SIGSTOP for -stop-for while the churn goes on.
func (s *soak) stopCont(ctx context.Context, bg *sync.WaitGroup) {
	defer bg.Done()
	defer close(s.stopDone)
	s.mu.Lock()
	p := s.proc
	s.state = berthStopped
	s.mu.Unlock()
	ops0 := s.totalOps()
	at := time.Now()
	_ = p.Signal(syscall.SIGSTOP)
	s.opLog("SIGSTOP berth")
	logf("SIGSTOP berth for %s", s.opt.stopFor)
	_ = benchkit.SleepCtx(ctx, s.opt.stopFor)
	_ = p.Signal(syscall.SIGCONT)
	s.opLog("SIGCONT berth")
	s.mu.Lock()
	s.state, s.upSince = berthUp, time.Now()
	s.res.stop = &stopResult{at: at, dur: time.Since(at)}
	s.mu.Unlock()
	s.res.stop.ops = s.totalOps() - ops0
	logf("SIGCONT berth")
}

// killRestart kills berth with SIGKILL, does what the i-th mode says
// around the restart, and checks the containers 2 s (-settle) after
// /readyz.
func (s *soak) killRestart(ctx context.Context, i int, bg *sync.WaitGroup) error {
	kr := &killResult{mode: killModes[i%len(killModes)]}
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	kr.at = time.Now()
	s.kill9(p)
	logf("kill -9 berth (%s)", kr.mode)
	s.opLog("kill -9 berth (%s)", kr.mode)
	fileOp := func(add bool, kind string) error {
		s.led.mu.Lock()
		defer s.led.mu.Unlock()
		if add {
			if err := s.opAdd(nil, kind); err != nil {
				return err
			}
			kr.pod = fmt.Sprintf("%s-%03d", s.prefix, s.led.next-1)
			return nil
		}
		q := s.pick(declared)
		if q == nil {
			return nil
		}
		kr.pod = q.name
		return s.opDelete(q, kind)
	}
	var err error
	switch i % len(killModes) {
	case 1:
		err = fileOp(false, "delete (berth down)")
	case 2:
		err = fileOp(true, "add-new (berth down)")
	}
	if err != nil {
		return err
	}
	np, err := s.startBerth()
	if err != nil {
		return err
	}
	if i%len(killModes) == 3 {
		if err := benchkit.SleepCtx(ctx, 500*time.Millisecond); err != nil {
			return err
		}
		if err := fileOp(false, "delete (berth restarting)"); err != nil {
			return err
		}
	}
	ready, err := s.waitReady(ctx, np, 2*time.Minute)
	if err != nil {
		return err
	}
	kr.readyAfter = ready.Sub(kr.at)
	if err := benchkit.SleepCtx(ctx, s.opt.settle); err != nil {
		return err
	}
	list, err := s.listContainers(ctx)
	if err != nil {
		return err
	}
	d := s.compare(group(list), s.led.snapshot(), time.Now())
	kr.orphans, kr.missing = d.orphanPods, d.missing
	logf("berth ready %s after the kill; %s later: orphans %v, missing %v", kr.readyAfter.Round(time.Millisecond), s.opt.settle, kr.orphans, kr.missing)
	s.mu.Lock()
	s.res.kills = append(s.res.kills, kr)
	s.mu.Unlock()
	if len(kr.orphans) > 0 {
		s.hold(kr.orphans, true)
		bg.Add(1)
		go func() {
			defer bg.Done()
			defer s.hold(kr.orphans, false)
			s.watchGone(ctx, kr, ready)
		}()
	}
	return nil
}

// hold sets the hold of the named pods.
func (s *soak) hold(pods []string, on bool) {
	s.led.mu.Lock()
	defer s.led.mu.Unlock()
	for _, n := range pods {
		if p := s.led.pods[n]; p != nil {
			p.hold = on
		}
	}
}

// watchGone polls until no container of kr's orphans runs, for 3 minutes.
func (s *soak) watchGone(ctx context.Context, kr *killResult, ready time.Time) {
	deadline := ready.Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if list, err := s.listContainers(ctx); err == nil {
			groups, left := group(list), false
			for _, pod := range kr.orphans {
				if g := groups[pod]; g != nil && g.running() > 0 {
					left = true
				}
			}
			if !left {
				s.mu.Lock()
				kr.cleared = time.Since(ready)
				s.mu.Unlock()
				return
			}
		}
		if benchkit.SleepCtx(ctx, 250*time.Millisecond) != nil {
			return
		}
	}
	s.mu.Lock()
	kr.clearedNot = true
	s.mu.Unlock()
}

// checkCrash restarts berth if it exited without being killed, and notes
// it with the log's tail.
func (s *soak) checkCrash(ctx context.Context) error {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil || !p.Exited() || p.killed {
		return nil
	}
	tail := s.logTail(2000)
	logf("berth exited on its own (%v); restarting it:\n%s", p.State(), tail)
	s.mu.Lock()
	s.crashes = append(s.crashes, fmt.Sprintf("%s: %v", time.Now().Format("15:04:05"), p.State()))
	s.mu.Unlock()
	np, err := s.startBerth()
	if err != nil {
		return err
	}
	_, err = s.waitReady(ctx, np, 2*time.Minute)
	return err
}

func (s *soak) totalOps() int {
	s.led.mu.Lock()
	defer s.led.mu.Unlock()
	n := 0
	for k, c := range s.led.ops {
		if k != "initial" {
			n += c
		}
	}
	return n
}

// waitExact polls every 50 ms until the engine runs exactly the declared
// set (one sandbox and one app of the declared generation per declared
// pod, no other running container) for hold, and returns the time from
// `from` to the first poll of that streak, and how many streaks broke.
func (s *soak) waitExact(ctx context.Context, from time.Time, timeout, hold time.Duration) (time.Duration, int, string, error) {
	deadline := time.Now().Add(timeout)
	var since time.Time
	breaks, why := 0, ""
	for {
		list, err := s.listContainers(ctx)
		if err != nil {
			return 0, breaks, "", err
		}
		t := time.Now()
		ok, w := s.exact(ctx, group(list), s.led.snapshot())
		switch {
		case ok && since.IsZero():
			since = t
		case !ok && !since.IsZero():
			since = time.Time{}
			breaks++
			logf("the declared set ran, then not: %s", w)
		}
		if !ok {
			why = w
		}
		if ok && t.Sub(since) >= hold {
			return since.Sub(from), breaks, "", nil
		}
		if t.After(deadline) {
			return 0, breaks, why, fmt.Errorf("not exactly the declared set %s after the last change", timeout)
		}
		if err := benchkit.SleepCtx(ctx, 50*time.Millisecond); err != nil {
			return 0, breaks, why, err
		}
	}
}

// exact reports whether groups are exactly the declared set, else why not.
func (s *soak) exact(ctx context.Context, groups map[string]*podCtrs, snap map[string]podView) (bool, string) {
	for pod, g := range groups {
		if g.running() > 0 && !snap[pod].declared {
			return false, fmt.Sprintf("%d containers of undeclared pod %s run", g.running(), pod)
		}
	}
	for pod, v := range snap {
		if !v.declared {
			continue
		}
		g := groups[pod]
		if g == nil || len(g.sandboxes) != 1 || len(g.apps) != 1 {
			sb, apps := 0, 0
			if g != nil {
				sb, apps = len(g.sandboxes), len(g.apps)
			}
			return false, fmt.Sprintf("pod %s: %d sandboxes and %d apps run", pod, sb, apps)
		}
		gen, ok := s.obs.gen(ctx, g.apps[0].id)
		if want := strconv.Itoa(v.gen); !ok || gen != want {
			return false, fmt.Sprintf("pod %s runs generation %q, declared %s", pod, gen, want)
		}
	}
	return true, ""
}

// scanLog looks in berth's log for each hostile file's name and for
// panics.
func (s *soak) scanLog() {
	data, err := os.ReadFile(s.logPath)
	if err != nil {
		return
	}
	text := string(data)
	for _, h := range s.res.hostile {
		h.namedInLog = h.name != "" && strings.Contains(text, h.name)
	}
	s.res.panics = strings.Count(text, "panic:")
	s.res.logLines = strings.Count(text, "\n")
}
