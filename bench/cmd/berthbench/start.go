package main

// Scenario 1, start latency: N pods (sandbox + one app container each, the
// app publishing a host port) from nothing to all 2N containers started,
// through berth, through the same Docker calls made directly (the physical
// limit), and through docker-compose. The clock starts before the first pod
// file is written, the first Docker call is made or docker-compose is
// exec'd, and stops when the bench has seen the 2N-th container's "start"
// event: the same observation, on the same clock, for every system.

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"sync"
	"time"
)

const (
	sysBerth   = "berth"
	sysDirect  = "direct"
	sysCompose = "compose"
)

type startRun struct {
	system      string
	n, run      int
	total       time.Duration // t0 → last container start
	firstCreate time.Duration // t0 → first container created
	cmdWall     time.Duration // compose: wall time of `docker-compose up -d`
	berthMean   time.Duration // berth: mean berth_pod_start_duration_seconds
	err         string
}

type startResults struct {
	systems        []string
	runs           []startRun
	composeSkipped string
	// sweep is the direct baseline at the largest N with other
	// concurrencies, by worker count.
	sweepN int
	sweep  map[int][]time.Duration
}

// durations returns the totals of the successful runs of system at n.
func (s *startResults) durations(system string, n int) []time.Duration {
	var ds []time.Duration
	for _, r := range s.runs {
		if r.system == system && r.n == n && r.err == "" {
			ds = append(ds, r.total)
		}
	}
	return ds
}

func (b *bench) runStart(ctx context.Context, res *results) error {
	sr := &startResults{systems: []string{sysBerth, sysDirect, sysCompose}}
	res.start = sr
	if _, err := exec.LookPath(b.opt.compose); err != nil {
		sr.composeSkipped = fmt.Sprintf("%s not found (install Debian's docker-compose)", b.opt.compose)
		sr.systems = sr.systems[:2]
		logf("compose baseline skipped: %s", sr.composeSkipped)
	}
	var errs []error
	for _, n := range b.opt.ns {
		for r := 0; r < b.opt.runs; r++ {
			// Rotate the order, so a slow phase of the shared machine does
			// not always hit the same system.
			for k := range sr.systems {
				sys := sr.systems[(k+r)%len(sr.systems)]
				var run startRun
				err := b.repeat(ctx, res, fmt.Sprintf("start %s N=%d run %d", sys, n, r+1), func() error {
					var err error
					run, err = b.startOnce(ctx, sys, n, r)
					return err
				})
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if err != nil {
					run.err = err.Error()
					errs = append(errs, fmt.Errorf("%s N=%d run %d: %w", sys, n, r+1, err))
					logf("%-7s N=%-3d run %d: FAILED: %v", sys, n, r+1, err)
				} else {
					logf("%-7s N=%-3d run %d: %7.1f ms (first create %.1f ms)", sys, n, r+1, msf(run.total), msf(run.firstCreate))
				}
				sr.runs = append(sr.runs, run)
				if err := sleepCtx(ctx, time.Second); err != nil { // let the engine settle
					return err
				}
			}
		}
	}
	if len(b.opt.directWorkers) > 0 && ctx.Err() == nil {
		if err := b.directSweep(ctx, res, sr); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// directSweep measures the direct baseline at the largest N with each
// concurrency of -direct-workers, one run each, so the report shows where the
// limit lies and that berth's 4 workers are not what holds it back.
func (b *bench) directSweep(ctx context.Context, res *results, sr *startResults) error {
	n := slices.Max(b.opt.ns)
	sr.sweepN, sr.sweep = n, map[int][]time.Duration{}
	var errs []error
	for _, w := range b.opt.directWorkers {
		var run startRun
		err := b.repeat(ctx, res, fmt.Sprintf("direct sweep N=%d workers=%d", n, w), func() error {
			var err error
			run, err = b.startOnceWith(ctx, sysDirect, n, 0, w, fmt.Sprintf("sweep-w%d", w))
			return err
		})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("direct sweep workers=%d: %w", w, err))
			continue
		}
		logf("direct  N=%-3d workers %2d: %7.1f ms", n, w, msf(run.total))
		sr.sweep[w] = append(sr.sweep[w], run.total)
		if err := sleepCtx(ctx, time.Second); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

func (b *bench) startOnce(ctx context.Context, system string, n, r int) (startRun, error) {
	return b.startOnceWith(ctx, system, n, r, b.opt.workers, "")
}

func (b *bench) startOnceWith(ctx context.Context, system string, n, r, workers int, tag string) (startRun, error) {
	run := startRun{system: system, n: n, run: r + 1}
	timeout := time.Minute + time.Duration(n)*time.Second
	wctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the event stream
	caseID := fmt.Sprintf("%s-n%d-r%d%s", system, n, r+1, tag)
	match := map[string]string{labelRun: b.id, labelCase: caseID}

	var (
		t0  time.Time
		w   *watcher
		err error
	)
	switch system {
	case sysBerth:
		bp, err := b.startBerth(ctx, b.node(fmt.Sprintf("n%d-r%d", n, r+1)), nil)
		if err != nil {
			return run, err
		}
		defer b.finishBerth(bp)
		match = map[string]string{nodeLabel: bp.node}
		yamls := make([]string, n)
		for i := range yamls {
			yamls[i] = podYAML(bp.podName(i), b.hostPort(i))
		}
		if w, err = b.watch(wctx, time.Now(), match, "create", "start"); err != nil {
			return run, err
		}
		t0 = time.Now()
		for i, y := range yamls {
			if err := bp.writePod(bp.podName(i), y); err != nil {
				return run, err
			}
		}
		st, err := w.waitStarts(ctx, 2*n, timeout)
		if err != nil {
			return run, fmt.Errorf("%w\nberth log tail:\n%s", err, bp.logTail())
		}
		run.total, run.firstCreate = st.seen.Sub(t0), st.firstCreate.Sub(t0)
		run.berthMean = b.berthPodStartMean(ctx, bp, n)

	case sysDirect:
		defer func() {
			cctx, cancel := cleanupCtx()
			defer cancel()
			if _, err := b.removeAll(cctx, match); err != nil {
				logf("cleanup %s: %v", caseID, err)
			}
		}()
		if w, err = b.watch(wctx, time.Now(), match, "create", "start"); err != nil {
			return run, err
		}
		t0 = time.Now()
		if err := b.directPods(ctx, n, workers, match); err != nil {
			return run, err
		}
		st, err := w.waitStarts(ctx, 2*n, timeout)
		if err != nil {
			return run, err
		}
		run.total, run.firstCreate = st.seen.Sub(t0), st.firstCreate.Sub(t0)

	case sysCompose:
		project := fmt.Sprintf("bb%sn%dr%d", b.id, n, r+1)
		file, err := b.composeWrite(project, b.composeFile(n, caseID))
		if err != nil {
			return run, err
		}
		defer func() {
			cctx, cancel := cleanupCtx()
			defer cancel()
			b.composeDown(cctx, project, file)
		}()
		if w, err = b.watch(wctx, time.Now(), match, "create", "start"); err != nil {
			return run, err
		}
		t0 = time.Now()
		if run.cmdWall, err = b.composeUp(ctx, project, file, 2*n, timeout); err != nil {
			return run, err
		}
		st, err := w.waitStarts(ctx, 2*n, timeout)
		if err != nil {
			return run, err
		}
		run.total, run.firstCreate = st.seen.Sub(t0), st.firstCreate.Sub(t0)
	}

	// Untimed check: all 2N containers are still running.
	if got, err := b.countRunning(ctx, match); err != nil {
		return run, err
	} else if got != 2*n {
		return run, fmt.Errorf("%d containers running after the start, want %d", got, 2*n)
	}
	return run, nil
}

// directPods runs directPod for pods 0..n-1 with workers goroutines (by
// default the concurrency of berth's controller).
func (b *bench) directPods(ctx context.Context, n, workers int, labels map[string]string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if _, err := b.directPod(ctx, i, labels); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		}()
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}

// berthPodStartMean waits (up to 10 s) until berth has recorded n pod starts
// and returns the mean of berth_pod_start_duration_seconds (desired state
// seen → all containers running, as berth measures it); 0 if unavailable.
func (b *bench) berthPodStartMean(ctx context.Context, bp *berthProc, n int) time.Duration {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		cnt, ok1 := bp.metric("berth_pod_start_duration_seconds_count")
		sum, ok2 := bp.metric("berth_pod_start_duration_seconds_sum")
		if ok1 && ok2 && cnt >= float64(n) {
			return time.Duration(sum / cnt * float64(time.Second))
		}
		if sleepCtx(ctx, 50*time.Millisecond) != nil {
			break
		}
	}
	return 0
}
