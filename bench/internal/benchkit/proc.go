package benchkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Proc is one started berth process. Its methods are safe for concurrent
// use; the process is reaped by Start's goroutine, never by the caller.
type Proc struct {
	Port int // of berth's HTTP server on 127.0.0.1
	cmd  *exec.Cmd
	done chan struct{} // closed when the process exited
}

// ErrExited: berth exited before /readyz answered 200.
var ErrExited = errors.New("berth exited before it was ready")

// ErrNotReady: /readyz did not answer 200 within the timeout.
var ErrNotReady = errors.New("berth not ready")

// URL is the address of path on berth's HTTP server.
func (p *Proc) URL(path string) string { return fmt.Sprintf("http://127.0.0.1:%d%s", p.Port, path) }

// Pid is the process id; the pid may be reused once Done is closed.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// State is how the process ended; nil until Done is closed.
func (p *Proc) State() *os.ProcessState {
	if !p.Exited() {
		return nil
	}
	return p.cmd.ProcessState
}

// Signal sends sig to berth alone (not its children); an error once it
// exited.
func (p *Proc) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Stop sends SIGTERM (and SIGCONT, in case berth is stopped) and waits up
// to grace for the exit; then it calls onKill, kills berth and waits.
// berth leaves its pods running when it exits. Stop on an exited process
// does nothing.
func (p *Proc) Stop(grace time.Duration, onKill func()) {
	if p.Exited() {
		return
	}
	_ = p.Signal(syscall.SIGTERM)
	_ = p.Signal(syscall.SIGCONT)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		return
	case <-t.C:
	}
	onKill()
	_ = p.cmd.Process.Kill()
	<-p.done
}

// WaitReady polls /readyz every poll until it answers 200 (sources synced,
// engine reachable). It fails with ErrExited when berth exits first, with
// ErrNotReady (and the last answer) after timeout, or with ctx's error.
func (p *Proc) WaitReady(ctx context.Context, timeout, poll time.Duration) error {
	c := http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		select {
		case <-p.done:
			return ErrExited
		default:
		}
		resp, err := c.Get(p.URL("/readyz"))
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w after %s: %s", ErrNotReady, timeout, last)
		}
		if err := SleepCtx(ctx, poll); err != nil {
			return err
		}
	}
}

// Metric returns the value of an exact series (name and labels as berth
// writes them) from berth's /metrics; false when berth does not answer
// within timeout or has no such series.
func (p *Proc) Metric(series string, timeout time.Duration) (float64, bool) {
	c := http.Client{Timeout: timeout}
	resp, err := c.Get(p.URL("/metrics"))
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

// LogTail is the last n bytes of the file at path ("" when unreadable).
func LogTail(path string, n int) string {
	data, _ := os.ReadFile(path)
	if len(data) > n {
		data = data[len(data)-n:]
	}
	return string(data)
}
