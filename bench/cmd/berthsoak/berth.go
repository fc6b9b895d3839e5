package main

// The berth process: started, killed with SIGKILL, stopped and continued,
// always with the same node name, pods dir, root_dir and port, so every
// start adopts what the last one left. Its output is appended to one log.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/berth-dev/berth/bench/internal/benchkit"
	bruntime "github.com/berth-dev/berth/runtime"
)

const (
	nodeLabel    = bruntime.LabelNode
	podLabel     = bruntime.LabelPodName
	ctrLabel     = bruntime.LabelContainerName
	restartLabel = bruntime.LabelRestartCount
	sandboxName  = "POD"
)

// berthProc is one `berth run` subprocess.
type berthProc struct {
	*benchkit.Proc
	started time.Time
	killed  bool // by the harness (SIGKILL), so its exit is no crash
}

// startBerth starts berth (it does not wait for /readyz). The file source
// runs at pod_security baseline so that a privileged pod file is refused.
func (s *soak) startBerth() (*berthProc, error) {
	logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logFile, "---- berthsoak: start %d at %s\n", s.starts+1, time.Now().Format(time.RFC3339Nano))
	cfg := benchkit.Berth{Bin: s.berthBin, Node: s.node, RootDir: s.rootDir, PodsDir: s.podsDir, Port: s.port,
		DockerHost: s.dockerHost, Env: []string{"BERTH_SOURCES_FILE_POD_SECURITY=baseline"}}
	bp, err := cfg.Start(logFile)
	if err != nil {
		return nil, err
	}
	p := &berthProc{Proc: bp, started: time.Now()}
	s.mu.Lock()
	s.proc, s.state = p, berthDown
	s.starts++
	s.mu.Unlock()
	return p, nil
}

// waitReady waits until /readyz answers 200 (sources synced, engine
// reachable) and marks berth up from then.
func (s *soak) waitReady(ctx context.Context, p *berthProc, timeout time.Duration) (time.Time, error) {
	if err := p.WaitReady(ctx, timeout, 20*time.Millisecond); err != nil {
		if errors.Is(err, benchkit.ErrExited) {
			err = fmt.Errorf("%w:\n%s", err, s.logTail(3000))
		}
		return time.Time{}, err
	}
	now := time.Now()
	s.mu.Lock()
	s.state, s.upSince = berthUp, now
	s.mu.Unlock()
	return now, nil
}

// kill9 sends SIGKILL and waits for the exit.
func (s *soak) kill9(p *berthProc) {
	s.mu.Lock()
	p.killed, s.state = true, berthDown
	s.mu.Unlock()
	_ = p.Signal(syscall.SIGKILL)
	<-p.Done()
}

// stop stops berth: SIGTERM (and SIGCONT, in case it is stopped), killed
// after 20 s.
func (p *berthProc) stop() {
	p.Stop(20*time.Second, func() { logf("berth did not exit within 20s of SIGTERM; killing it") })
}

// procStats reads VmRSS (bytes), the open fds and utime+stime (clock
// ticks) of pid.
func procStats(pid int) (rss int64, fds int, ticks int64, err error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				rss = kb * 1024
			}
		}
	}
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return rss, 0, 0, err
	}
	ticks, err = benchkit.CPUTicks(pid)
	return rss, len(ents), ticks, err
}

// logTail is the last n bytes of berth's log.
func (s *soak) logTail(n int) string { return benchkit.LogTail(s.logPath, n) }

// listContainers lists every container (running or not) of this run's node.
func (s *soak) listContainers(ctx context.Context) ([]container.Summary, error) {
	f := filters.NewArgs(filters.Arg("label", nodeLabel+"="+s.node))
	lctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return s.cli.ContainerList(lctx, container.ListOptions{All: true, Filters: f})
}

// removeAll force-removes every container of this run's node.
func (s *soak) removeAll(ctx context.Context) (int, error) {
	list, err := s.listContainers(ctx)
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, c := range list {
		errs = append(errs, s.dk.RemoveContainer(ctx, c.ID))
	}
	return len(list), errors.Join(errs...)
}
