package main

// Scenario 3, idle cost: berth runs N pods (default 100) with its default
// timings (file rescan 20 s, controller resync 60 s) and talks to Docker
// through a counting proxy. After the pods run and a settle time, a window
// (default 60 s) measures berth's CPU (utime+stime from /proc/<pid>/stat),
// its RSS (VmRSS, and the peak VmHWM) and the Docker API requests it makes.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/berth-dev/berth/bench/internal/benchkit"
)

type idleResults struct {
	pods        int
	startup     time.Duration // pod files written → all containers started
	startupCPU  float64       // berth CPU seconds from ready to all started (+ 2 s)
	settle      time.Duration
	window      time.Duration
	cpuSeconds  float64
	rssKiB      int64 // VmRSS at the end of the window
	hwmKiB      int64 // VmHWM: peak RSS over berth's life
	goroutines  float64
	bootReqs    map[string]int // berth start → ready
	startupReqs map[string]int // pods written → all started (+ 2 s)
	settleReqs  map[string]int // settle time, before the window
	windowReqs  map[string]int
	openStreams map[string]int // requests in flight at the end of the window
	clkTck      int
}

func (r *idleResults) cpuPercent() float64 {
	return r.cpuSeconds / r.window.Seconds() * 100
}

func (r *idleResults) windowTotal() int {
	n := 0
	for _, v := range r.windowReqs {
		n += v
	}
	return n
}

func (b *bench) runIdle(ctx context.Context, res *results) error {
	return b.repeat(ctx, res, "idle", func() error {
		res.idle = &idleResults{pods: b.opt.idlePods, settle: b.opt.settle, clkTck: benchkit.ClkTck()}
		return b.idle(ctx, res.idle)
	})
}

func (b *bench) idle(ctx context.Context, ir *idleResults) error {
	sock := filepath.Join(b.work, "docker-proxy.sock")
	px, err := startProxy(sock, b.dockerHost)
	if err != nil {
		return err
	}
	defer px.close() // deferred first: runs after berth has stopped
	bp, err := b.startBerth(ctx, b.node("idle"), []string{"BERTH_DOCKER_HOST=unix://" + sock})
	if err != nil {
		return err
	}
	defer b.finishBerth(bp)
	pid := bp.Pid()
	ir.bootReqs = px.snapshot()

	// Our own observation goes to the engine directly, not through the proxy.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := b.watch(wctx, time.Now(), map[string]string{nodeLabel: bp.node}, "start")
	if err != nil {
		return err
	}
	cpuReady, err := benchkit.CPUTicks(pid)
	if err != nil {
		return err
	}
	t0 := time.Now()
	for i := 0; i < ir.pods; i++ {
		if err := bp.writePod(bp.podName(i), podYAML(bp.podName(i), b.hostPort(i))); err != nil {
			return err
		}
	}
	st, err := w.waitStarts(ctx, 2*ir.pods, 2*time.Minute+time.Duration(ir.pods)*time.Second)
	cancel()
	if err != nil {
		return fmt.Errorf("%d pods: %w", ir.pods, err)
	}
	ir.startup = st.seen.Sub(t0)
	logf("idle: %d pods running after %.0f ms", ir.pods, msf(ir.startup))
	if err := benchkit.SleepCtx(ctx, 2*time.Second); err != nil { // berth's follow-up inspects
		return err
	}
	c1 := px.snapshot()
	ir.startupReqs = diff(ir.bootReqs, c1)
	cpuStarted, err := benchkit.CPUTicks(pid)
	if err != nil {
		return err
	}
	ir.startupCPU = float64(cpuStarted-cpuReady) / float64(ir.clkTck)

	logf("idle: settling %s, then measuring %s", b.opt.settle, b.opt.idleWindow)
	if err := benchkit.SleepCtx(ctx, b.opt.settle); err != nil {
		return err
	}
	c2 := px.snapshot()
	ir.settleReqs = diff(c1, c2)
	cpu0, err := benchkit.CPUTicks(pid)
	if err != nil {
		return err
	}
	tw := time.Now()
	if err := benchkit.SleepCtx(ctx, b.opt.idleWindow); err != nil {
		return err
	}
	cpu1, err := benchkit.CPUTicks(pid)
	if err != nil {
		return err
	}
	ir.window = time.Since(tw)
	ir.windowReqs = diff(c2, px.snapshot())
	ir.openStreams = px.open()
	ir.cpuSeconds = float64(cpu1-cpu0) / float64(ir.clkTck)
	if ir.rssKiB, ir.hwmKiB, err = memKiB(pid); err != nil {
		return err
	}
	ir.goroutines, _ = bp.Metric("go_goroutines", metricTimeout)
	if n, err := b.countRunning(ctx, map[string]string{nodeLabel: bp.node}); err != nil || n != 2*ir.pods {
		return fmt.Errorf("after the window %d containers run, want %d (%v)", n, 2*ir.pods, err)
	}
	logf("idle: CPU %.2f%% of a core, RSS %.1f MiB, %d Docker requests in %s",
		ir.cpuPercent(), float64(ir.rssKiB)/1024, ir.windowTotal(), ir.window.Round(time.Second))
	return nil
}

// memKiB returns VmRSS and VmHWM of pid.
func memKiB(pid int) (rss, hwm int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		}
	}
	return rss, hwm, nil
}
