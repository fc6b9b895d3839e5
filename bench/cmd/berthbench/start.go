package main

// Scenarios start and teardown, run together as one cycle per system, N and
// round: N pods (sandbox + one app container each, the app publishing a
// host port) are brought up, timed until the 2N-th container's "start"
// event, and then taken down, timed until the 2N-th "destroy" event. berth
// is ONE long-running process for the whole scenario, as users run it; its
// pods come and go through files renamed into, and removed from, its pods
// directory. Every time runs from the bench's clock just before the action
// (first rename or removal, first Docker call, exec of docker-compose) to an
// engine event timestamp: the same clock (the host's) for every system.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/berth-dev/berth/bench/internal/benchkit"
)

const (
	sysBerth    = "berth"
	sysMinimal  = "minimal"
	sysBerthCfg = "berth-config"
	sysCompose  = "compose"
)

// grace is the benchmark pods' terminationGracePeriodSeconds, which every
// system's graceful stop uses.
const grace = 2

type startRun struct {
	system      string
	n, run      int
	total       time.Duration // t0 → last container start (engine time)
	firstCreate time.Duration // t0 → first container created (engine time)
	cmdWall     time.Duration // compose: wall time of `docker-compose up -d`
	berthMean   time.Duration // berth: mean berth_pod_start_duration_seconds of the run's pods
	err         string
	down        downRun
}

// downRun is the teardown of one start run's pods.
type downRun struct {
	total     time.Duration // t0 → last container destroyed (engine time)
	appStop   time.Duration // median over the app containers of kill → die
	sigkilled int           // containers that died of SIGKILL (the grace ran out)
	cmdWall   time.Duration // compose: wall time of `docker-compose down`
	err       string
}

type startResults struct {
	systems        []string
	runs           []startRun
	composeSkipped string
	berthRestarts  int // times the long-running berth had exited and was started again
	// sweep is the minimal baseline at the largest N with other
	// concurrencies, by worker count.
	sweepN int
	sweep  map[int][]time.Duration
}

// durations returns the times of the successful runs of system at n: the
// start's, or the teardown's when down.
func (s *startResults) durations(system string, n int, down bool) []time.Duration {
	var ds []time.Duration
	for _, r := range s.runs {
		if r.system != system || r.n != n {
			continue
		}
		switch {
		case !down && r.err == "":
			ds = append(ds, r.total)
		case down && r.err == "" && r.down.err == "":
			ds = append(ds, r.down.total)
		}
	}
	return ds
}

func (b *bench) runStart(ctx context.Context, res *results) error {
	if b.tmpl == nil {
		return errors.New("no template of berth's pod (warm-up)")
	}
	sr := &startResults{systems: []string{sysBerth, sysMinimal, sysBerthCfg, sysCompose}}
	res.start = sr
	if _, err := exec.LookPath(b.opt.compose); err != nil {
		sr.composeSkipped = fmt.Sprintf("%s not found (install Debian's docker-compose)", b.opt.compose)
		sr.systems = sr.systems[:3]
		logf("compose baseline skipped: %s", sr.composeSkipped)
	}
	bp, err := b.startBerth(ctx, b.node("life"), nil)
	if err != nil {
		return err
	}
	defer func() { b.finishBerth(bp) }()
	var errs []error
	for _, n := range b.opt.ns {
		for r := 0; r < b.opt.runs; r++ {
			// Rotate the order, so a slow phase of the shared machine does
			// not always hit the same system.
			for k := range sr.systems {
				sys := sr.systems[(k+r)%len(sr.systems)]
				var run startRun
				err := b.repeat(ctx, res, fmt.Sprintf("start/teardown %s N=%d round %d", sys, n, r+1), func() error {
					if sys == sysBerth && bp.Exited() {
						logf("the long-running berth exited; starting another:\n%s", bp.logTail())
						b.finishBerth(bp)
						sr.berthRestarts++
						var err error
						if bp, err = b.startBerth(ctx, b.node(fmt.Sprintf("life%d", sr.berthRestarts)), nil); err != nil {
							return err
						}
					}
					var err error
					run, err = b.cycle(ctx, bp, sys, n, r, b.opt.workers, "", true)
					return err
				})
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if err != nil {
					if run.err == "" && run.down.err == "" {
						run.err = err.Error()
					}
					errs = append(errs, fmt.Errorf("%s N=%d round %d: %w", sys, n, r+1, err))
					logf("%-12s N=%-3d round %d: FAILED: %v", sys, n, r+1, err)
				} else {
					logf("%-12s N=%-3d round %d: start %7.1f ms (first create %.1f), teardown %7.1f ms (app stop %.1f ms)",
						sys, n, r+1, msf(run.total), msf(run.firstCreate), msf(run.down.total), msf(run.down.appStop))
				}
				sr.runs = append(sr.runs, run)
				if err := benchkit.SleepCtx(ctx, time.Second); err != nil { // let the engine settle
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

// directSweep measures the minimal baseline's start at the largest N with
// each concurrency of -direct-workers, one run each (removed by force,
// untimed), so the report shows where the limit lies and that berth's 4
// workers are not what holds it back.
func (b *bench) directSweep(ctx context.Context, res *results, sr *startResults) error {
	n := slices.Max(b.opt.ns)
	sr.sweepN, sr.sweep = n, map[int][]time.Duration{}
	var errs []error
	for _, w := range b.opt.directWorkers {
		var run startRun
		err := b.repeat(ctx, res, fmt.Sprintf("minimal sweep N=%d workers=%d", n, w), func() error {
			var err error
			run, err = b.cycle(ctx, nil, sysMinimal, n, 0, w, fmt.Sprintf("sweep-w%d", w), false)
			return err
		})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("minimal sweep workers=%d: %w", w, err))
			continue
		}
		logf("minimal N=%-3d workers %2d: %7.1f ms", n, w, msf(run.total))
		sr.sweep[w] = append(sr.sweep[w], run.total)
		if err := benchkit.SleepCtx(ctx, time.Second); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

// settleUp is the untimed pause between a start and its teardown, as
// between a user's apply and delete: the systems' follow-up work (berth's
// status, inspects) is over.
const settleUp = 2 * time.Second

// cycle brings n pods of system up and, when down, takes them down again,
// timing both. Without down (the sweep) the pods are removed by force.
func (b *bench) cycle(ctx context.Context, bp *berthProc, system string, n, r, workers int, tag string, down bool) (startRun, error) {
	run := startRun{system: system, n: n, run: r + 1}
	timeout := time.Minute + time.Duration(n)*time.Second
	wctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the event stream
	caseID := fmt.Sprintf("%s-n%d-r%d%s", system, n, r+1, tag)
	match := map[string]string{labelRun: b.id, labelCase: caseID}
	if system == sysBerth {
		match = map[string]string{nodeLabel: bp.node}
	}
	t, err := b.track(wctx, time.Now(), match)
	if err != nil {
		return run, err
	}
	var upDown interface {
		up(context.Context) (time.Time, error)
		down(context.Context) (time.Time, error)
		cleanup()
	}
	switch system {
	case sysBerth:
		upDown = &berthCycle{b: b, bp: bp, n: n, prefix: fmt.Sprintf("n%d-r%d", n, r+1)}
	case sysMinimal, sysBerthCfg:
		upDown = &directCycle{b: b, system: system, n: n, workers: workers, caseID: caseID, labels: match}
	case sysCompose:
		upDown = &composeCycle{b: b, n: n, caseID: caseID, project: fmt.Sprintf("bb%sn%dr%d", b.id, n, r+1)}
	}
	defer upDown.cleanup()

	var m0 berthMetrics
	if bc, ok := upDown.(*berthCycle); ok {
		m0 = bc.metrics()
	}
	t0, err := upDown.up(ctx)
	if err == nil {
		err = t.waitStarted(ctx, 2*n, timeout)
	}
	if err != nil {
		if bp != nil && system == sysBerth {
			err = fmt.Errorf("%w\nberth log tail:\n%s", err, bp.logTail())
		}
		return run, err
	}
	run.total, run.firstCreate = t.lastStart.Sub(t0), t.firstCreate.Sub(t0)
	switch c := upDown.(type) {
	case *berthCycle:
		run.berthMean = c.meanSince(ctx, m0)
	case *composeCycle:
		run.cmdWall = c.upWall
	}
	// Untimed check: all 2N containers are still running.
	if got, err := b.countRunning(ctx, match); err != nil {
		return run, err
	} else if got != 2*n {
		return run, fmt.Errorf("%d containers running after the start, want %d", got, 2*n)
	}
	if !down {
		return run, nil
	}
	if err := benchkit.SleepCtx(ctx, settleUp); err != nil {
		return run, err
	}
	t0, err = upDown.down(ctx)
	if err == nil {
		err = t.waitDestroyed(ctx, timeout)
	}
	if err != nil {
		run.down.err = err.Error()
		if system == sysBerth {
			err = fmt.Errorf("%w\nberth log tail:\n%s", err, bp.logTail())
		}
		return run, fmt.Errorf("teardown: %w", err)
	}
	run.down.total = t.lastDestroy.Sub(t0)
	run.down.appStop, run.down.sigkilled = t.stopStats()
	if c, ok := upDown.(*composeCycle); ok {
		run.down.cmdWall = c.downWall
	}
	return run, nil
}

// berthCycle brings pods up and down through the long-running berth's pods
// directory.
type berthCycle struct {
	b      *bench
	bp     *berthProc
	n      int
	prefix string
	names  []string
}

func (c *berthCycle) up(context.Context) (time.Time, error) {
	// The files are written first (hidden, untimed), then renamed into
	// place: the clock starts at the first rename.
	for i := 0; i < c.n; i++ {
		name := fmt.Sprintf("%s-%s-%03d", trimNode(c.bp.node), c.prefix, i)
		if err := os.WriteFile(filepath.Join(c.bp.pods, "."+name+".tmp"), []byte(podYAML(name, c.b.hostPort(i))), 0o644); err != nil {
			return time.Time{}, err
		}
		c.names = append(c.names, name)
	}
	t0 := time.Now()
	for _, name := range c.names {
		if err := os.Rename(filepath.Join(c.bp.pods, "."+name+".tmp"), filepath.Join(c.bp.pods, name+".yaml")); err != nil {
			return t0, err
		}
	}
	return t0, nil
}

func (c *berthCycle) down(context.Context) (time.Time, error) {
	t0 := time.Now()
	for _, name := range c.names {
		if err := os.Remove(filepath.Join(c.bp.pods, name+".yaml")); err != nil {
			return t0, err
		}
	}
	return t0, nil
}

// cleanup removes what is left of the cycle's pods: the files, then waits
// for berth to remove the containers, then removes by force what it left.
func (c *berthCycle) cleanup() {
	ctx, cancel := cleanupCtx()
	defer cancel()
	for _, name := range c.names {
		os.Remove(filepath.Join(c.bp.pods, "."+name+".tmp"))
		os.Remove(filepath.Join(c.bp.pods, name+".yaml"))
	}
	if err := c.b.waitGone(ctx, map[string]string{nodeLabel: c.bp.node}, time.Minute+time.Duration(c.n)*time.Second); err != nil {
		logf("berth left containers after the cycle (%v); removing them", err)
		if _, err := c.b.removeAll(ctx, map[string]string{nodeLabel: c.bp.node}); err != nil {
			logf("remove: %v", err)
		}
	}
}

type berthMetrics struct{ count, sum float64 }

func (c *berthCycle) metrics() berthMetrics {
	cnt, _ := c.bp.Metric("berth_pod_start_duration_seconds_count", metricTimeout)
	sum, _ := c.bp.Metric("berth_pod_start_duration_seconds_sum", metricTimeout)
	return berthMetrics{cnt, sum}
}

// meanSince waits (up to 10 s) until berth has recorded the cycle's n pod
// starts since m0 and returns their mean berth_pod_start_duration_seconds
// (desired state seen → all containers running, as berth measures it); 0
// if unavailable.
func (c *berthCycle) meanSince(ctx context.Context, m0 berthMetrics) time.Duration {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		m := c.metrics()
		if m.count-m0.count >= float64(c.n) {
			return time.Duration((m.sum - m0.sum) / (m.count - m0.count) * float64(time.Second))
		}
		if benchkit.SleepCtx(ctx, 50*time.Millisecond) != nil {
			break
		}
	}
	return 0
}

// directCycle is the direct program: per pod create+start of the sandbox,
// then create+start of the app in its namespaces, by workers goroutines;
// the teardown stops and removes each pod's app, then its sandbox,
// gracefully, by the same number of goroutines.
type directCycle struct {
	b       *bench
	system  string
	n       int
	workers int
	caseID  string
	labels  map[string]string
	pods    []directPodIDs
}

type directPodIDs struct {
	sandbox, app string
	dir          string // berth-config: the pod's directory under the baseline's root
}

func (c *directCycle) up(ctx context.Context) (time.Time, error) {
	specs := make([]func(context.Context) (directPodIDs, error), c.n)
	for i := range specs {
		name := podName(i)
		cname := "berthbench_" + c.b.id + "_" + c.caseID + "_" + name
		if c.system == sysMinimal {
			sb, app := c.b.minimalSpecs(name, c.b.hostPort(i), c.labels)
			specs[i] = func(ctx context.Context) (directPodIDs, error) {
				return c.b.directPod(ctx, cname, sb, app, nil)
			}
			continue
		}
		cp, err := c.b.tmpl.clone(c.b.id+"-"+c.caseID+"-"+name, fakeUID(), c.b.cfgNode, c.b.cfgRoot, c.b.hostPort(i), c.labels)
		if err != nil {
			return time.Time{}, err
		}
		specs[i] = func(ctx context.Context) (directPodIDs, error) {
			ids, err := c.b.directPod(ctx, cname, cp.sandbox, cp.app, cp.makeMounts)
			ids.dir = cp.podDir
			return ids, err
		}
	}
	c.pods = make([]directPodIDs, c.n)
	t0 := time.Now()
	err := parallel(ctx, c.n, c.workers, func(ctx context.Context, i int) error {
		var err error
		c.pods[i], err = specs[i](ctx)
		return err
	})
	return t0, err
}

func (c *directCycle) down(ctx context.Context) (time.Time, error) {
	t0 := time.Now()
	err := parallel(ctx, c.n, c.workers, func(ctx context.Context, i int) error {
		p := c.pods[i]
		for _, id := range []string{p.app, p.sandbox} {
			if err := c.b.stopRemove(ctx, id); err != nil {
				return err
			}
		}
		if p.dir != "" {
			return os.RemoveAll(p.dir)
		}
		return nil
	})
	return t0, err
}

func (c *directCycle) cleanup() {
	ctx, cancel := cleanupCtx()
	defer cancel()
	if _, err := c.b.removeAll(ctx, c.labels); err != nil {
		logf("cleanup %s: %v", c.caseID, err)
	}
	for _, p := range c.pods {
		if p.dir != "" {
			os.RemoveAll(p.dir)
		}
	}
}

// composeCycle is `docker-compose up -d` and `docker-compose down` of the
// equivalent file.
type composeCycle struct {
	b                *bench
	n                int
	caseID, project  string
	file             string
	upWall, downWall time.Duration
}

func (c *composeCycle) up(ctx context.Context) (time.Time, error) {
	var err error
	if c.file, err = c.b.composeWrite(c.project, c.b.composeFile(c.n, c.caseID)); err != nil {
		return time.Time{}, err
	}
	t0 := time.Now()
	c.upWall, err = c.b.composeRun(ctx, c.project, c.file, 2*c.n, time.Minute+time.Duration(c.n)*time.Second, "up", "-d", "--no-color")
	return t0, err
}

func (c *composeCycle) down(ctx context.Context) (time.Time, error) {
	t0 := time.Now()
	var err error
	c.downWall, err = c.b.composeRun(ctx, c.project, c.file, 2*c.n, time.Minute+time.Duration(c.n)*time.Second, "down")
	return t0, err
}

func (c *composeCycle) cleanup() {
	if c.file == "" {
		return
	}
	ctx, cancel := cleanupCtx()
	defer cancel()
	b := c.b
	b.mu.Lock()
	_, pending := b.projects[c.project]
	b.mu.Unlock()
	if pending {
		b.composeDown(ctx, c.project, c.file)
	}
}

// parallel runs f for 0..n-1 on workers goroutines, stopping at the first
// error.
func parallel(ctx context.Context, n, workers int, f func(context.Context, int) error) error {
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
				if err := f(ctx, i); err != nil {
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

// fakeUID is a random pod UID for the berth-config baseline's pods.
func fakeUID() string {
	h := benchkit.RandHex(16)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func trimNode(node string) string { return node[len("bb-"):] }
