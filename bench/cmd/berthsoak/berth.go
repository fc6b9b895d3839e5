package main

// The berth process: started, killed with SIGKILL, stopped and continued,
// always with the same node name, pods dir, root_dir and port, so every
// start adopts what the last one left. Its output is appended to one log.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

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
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process exited
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
	cmd := exec.Command(s.berthBin, "run")
	cmd.Env = append(berthlessEnv(),
		"BERTH_NODE_NAME="+s.node,
		"BERTH_ROOT_DIR="+s.rootDir,
		"BERTH_SOURCES_FILE_PATH="+s.podsDir,
		"BERTH_SOURCES_FILE_POD_SECURITY=baseline",
		"BERTH_SERVER_ADDRESS=127.0.0.1",
		"BERTH_SERVER_PORT="+strconv.Itoa(s.port),
		"BERTH_CADVISOR_ENABLED=false",
		"BERTH_DOCKER_HOST="+s.dockerHost,
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group: a Ctrl-C reaches only berthsoak, which then
	// stops berth and cleans up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start berth: %w", err)
	}
	p := &berthProc{cmd: cmd, done: make(chan struct{}), started: time.Now()}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	s.mu.Lock()
	s.proc, s.state = p, berthDown
	s.starts++
	s.mu.Unlock()
	return p, nil
}

// waitReady waits until /readyz answers 200 (sources synced, engine
// reachable) and marks berth up from then.
func (s *soak) waitReady(ctx context.Context, p *berthProc, timeout time.Duration) (time.Time, error) {
	c := http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		select {
		case <-p.done:
			return time.Time{}, fmt.Errorf("berth exited before it was ready:\n%s", s.logTail(3000))
		default:
		}
		resp, err := c.Get(s.url("/readyz"))
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				now := time.Now()
				s.mu.Lock()
				s.state, s.upSince = berthUp, now
				s.mu.Unlock()
				return now, nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("berth not ready after %s: %s", timeout, last)
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return time.Time{}, err
		}
	}
}

func (s *soak) url(path string) string { return fmt.Sprintf("http://127.0.0.1:%d%s", s.port, path) }

func (p *berthProc) pid() int { return p.cmd.Process.Pid }

func (p *berthProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill9 sends SIGKILL and waits for the exit.
func (s *soak) kill9(p *berthProc) {
	s.mu.Lock()
	p.killed, s.state = true, berthDown
	s.mu.Unlock()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop sends SIGTERM (and SIGCONT, in case it is stopped) and waits up to
// 20 s, then kills.
func (p *berthProc) stop() {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	select {
	case <-p.done:
		return
	case <-time.After(20 * time.Second):
	}
	logf("berth did not exit within 20s of SIGTERM; killing it")
	_ = p.cmd.Process.Kill()
	<-p.done
}

// metric returns the value of an exact series from berth's /metrics.
func (s *soak) metric(series string) (float64, bool) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(s.url("/metrics"))
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
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
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return rss, len(ents), 0, err
	}
	st := string(stat)
	i := strings.LastIndexByte(st, ')')
	if i < 0 {
		return rss, len(ents), 0, errors.New("unexpected /proc/<pid>/stat")
	}
	f := strings.Fields(st[i+1:])
	if len(f) < 13 {
		return rss, len(ents), 0, errors.New("unexpected /proc/<pid>/stat")
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	stt, _ := strconv.ParseInt(f[12], 10, 64)
	return rss, len(ents), ut + stt, nil
}

// logTail is the last n bytes of berth's log.
func (s *soak) logTail(n int) string {
	data, _ := os.ReadFile(s.logPath)
	if len(data) > n {
		data = data[len(data)-n:]
	}
	return string(data)
}

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

// berthlessEnv is our environment without BERTH_ variables.
func berthlessEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BERTH_") {
			env = append(env, kv)
		}
	}
	return env
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
