package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
)

// TestKubectlStreams runs kubectl logs, exec and port-forward against pod
// web (containers web: serve on 8080, side: sleep) and pod crashy
// (crash: exits 3 after 2 s, again and again; steady: sleep).
func TestKubectlStreams(t *testing.T) {
	k := startKubectlEnv(t)
	node := k.b.Node
	writeFile(t, k.b.Pods, "web.yaml", podYAML("web",
		Ctr{Name: "web", Env: [][2]string{{"PORT", "8080"}, {"MESSAGE", "hello-kubectl"}}, Port: 8080},
		Ctr{Name: "side", Args: []string{"sleep"}}))
	writeFile(t, k.b.Pods, "crashy.yaml", podYAML("crashy",
		Ctr{Name: "crash", Args: []string{"exit", "3", "2s"}},
		Ctr{Name: "steady", Args: []string{"sleep"}}))
	ids := waitPodRunning(t, node, "web", "web", "side")
	k.waitReady(t, "default", "web")

	t.Run("logs", func(t *testing.T) {
		r := k.ok(t, "logs", "web")
		if !strings.Contains(r.stdout, "testapp serve starting\n") || strings.TrimSpace(r.stderr) != `Defaulted container "web" out of: web, side` {
			t.Errorf("want web's log and kubectl's note on the default container: %s", r)
		}
	})
	t.Run("logs -c", func(t *testing.T) {
		r := k.ok(t, "logs", "web", "-c", "side")
		if !strings.Contains(r.stdout, "testapp sleep starting\n") || strings.Contains(r.stdout, "serve") || r.stderr != "" {
			t.Errorf("want side's log only: %s", r)
		}
		r = k.ok(t, "logs", "pod/web", "-c", "side", "--tail", "1", "--timestamps")
		if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\S+ testapp sleep (starting|stderr)\n$`).MatchString(r.stdout) {
			t.Errorf("--tail 1 --timestamps: %s", r)
		}
	})
	t.Run("logs -f", func(t *testing.T) {
		s := k.start(t, "logs", "-f", "web", "-c", "side")
		s.waitLine(t, "the start banner", func(l string) bool { return l == "testapp sleep starting" })
		// A line written now: testapp touch appends a timestamp to the
		// container's own stdout (through the engine, not berth).
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if code, out, err := dk.Exec(ctx, ids["side"], []string{"/testapp", "touch", "/proc/1/fd/1"}); err != nil || code != 0 {
			t.Fatalf("exec touch /proc/1/fd/1: %d %v %s", code, err, out)
		}
		s.waitLine(t, "the line written after -f started", func(l string) bool {
			_, err := time.Parse(time.RFC3339Nano, l)
			return err == nil
		})
		select {
		case err := <-s.done:
			t.Errorf("logs -f ended while the container runs: %v, stderr %q", err, s.stderr.String())
		default:
		}
		s.interrupt(t)
	})
	t.Run("logs -p", func(t *testing.T) {
		// The steady container never ended: no previous instance.
		waitPodRunning(t, node, "crashy", "crash", "steady")
		r := k.run(t, "", "logs", "-p", "crashy", "-c", "steady")
		if r.code != 1 || !strings.Contains(r.stderr, `previous terminated container "steady" in pod "crashy" not found`) {
			t.Errorf("want kubectl's error for no previous instance: %s", r)
		}
		k.eventually(t, "crash restarted once", func(r kubectlRun) bool {
			return r.stdout != "" && r.stdout != "0"
		}, "get", "pod", "crashy", "-o", `jsonpath={.status.containerStatuses[?(@.name=="crash")].restartCount}`)
		// Once RESTARTS shows 1, logs -p finds the instance before (a
		// few seconds allowed: the status and the engine's container list
		// are read apart), and it printed before the current one (which
		// may be created and not yet started: retried).
		first := func(r kubectlRun) (time.Time, bool) {
			f := strings.Fields(r.stdout)
			if len(f) < 3 || !strings.Contains(r.stdout, " testapp exit starting\n") {
				return time.Time{}, false
			}
			ts, err := time.Parse(time.RFC3339Nano, f[0])
			return ts, err == nil
		}
		waitFor(t, 10*time.Second, "logs -p older than logs, both with the banner", func() (bool, string) {
			prev := k.run(t, "", "logs", "-p", "crashy", "-c", "crash", "--timestamps")
			cur := k.run(t, "", "logs", "crashy", "-c", "crash", "--timestamps")
			pt, ok1 := first(prev)
			ct, ok2 := first(cur)
			return prev.code == 0 && cur.code == 0 && ok1 && ok2 && pt.Before(ct), prev.String() + "\n" + cur.String()
		})
	})

	t.Run("exec with piped stdin", func(t *testing.T) {
		r := k.run(t, "hello\n", "exec", "-i", "web", "-c", "web", "--", "/testapp", "cat")
		if r.code != 0 || r.stdout != "hello\n" || !strings.Contains(r.stderr, "cat: 6 bytes") {
			t.Errorf("want hello back and cat's count: %s", r)
		}
	})
	t.Run("exec exit code", func(t *testing.T) {
		r := k.run(t, "", "exec", "web", "--", "/testapp", "exit", "7")
		if r.code != 7 || !strings.Contains(r.stderr, "command terminated with exit code 7") ||
			!strings.Contains(r.stderr, `Defaulted container "web" out of: web, side`) {
			t.Errorf("want exit 7 passed through, and the default container's note: %s", r)
		}
	})
	t.Run("exec -it without a terminal", func(t *testing.T) {
		r := k.run(t, "x\n", "exec", "-it", "web", "-c", "web", "--", "/testapp", "cat")
		if r.code != 0 || r.stdout != "x\n" || !strings.Contains(r.stderr, "Unable to use a TTY") {
			t.Errorf("want kubectl's TTY warning and x back: %s", r)
		}
	})
	t.Run("exec -it", func(t *testing.T) {
		p := k.startPTY(t, 100, 37, "exec", "-it", "web", "-c", "side", "--", "/testapp", "size")
		waitFor(t, 30*time.Second, "the terminal's size in the container", func() (bool, string) {
			return strings.Contains(p.out.String(), "size 100x37\r\n"), p.out.String()
		})
		setSize(t, p.master, 120, 40)
		waitFor(t, 30*time.Second, "the resize in the container", func() (bool, string) {
			return strings.Contains(p.out.String(), "size 120x40\r\n"), p.out.String()
		})
		if _, err := p.master.Write([]byte("q\r")); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(t); code != 0 {
			t.Errorf("kubectl exec -it: exit %d; output %q", code, p.out.String())
		}
	})
	t.Run("exec -it isatty", func(t *testing.T) {
		p := k.startPTY(t, 80, 24, "exec", "-it", "web", "-c", "side", "--", "/testapp", "isatty")
		if code := p.wait(t); code != 0 || !strings.Contains(p.out.String(), "stdin=true stdout=true stderr=true") {
			t.Errorf("kubectl exec -it isatty: exit %d; output %q", code, p.out.String())
		}
	})
	t.Run("exec -it exit code", func(t *testing.T) {
		p := k.startPTY(t, 80, 24, "exec", "-it", "web", "-c", "side", "--", "/testapp", "exit", "5")
		if code := p.wait(t); code != 5 {
			t.Errorf("kubectl exec -it: exit %d, want 5; output %q", code, p.out.String())
		}
	})

	t.Run("port-forward", func(t *testing.T) {
		s := k.start(t, "port-forward", "pod/web", ":8080")
		var port int
		s.waitLine(t, "Forwarding from 127.0.0.1:PORT -> 8080", func(l string) bool {
			_, err := fmt.Sscanf(l, "Forwarding from 127.0.0.1:%d -> 8080", &port)
			return err == nil
		})
		for i := 0; i < 3; i++ { // one connection after another
			httpWant(t, fmt.Sprintf("http://127.0.0.1:%d/", port), "hello-kubectl")
		}
		s.interrupt(t)
	})
}

// ptyRun is a kubectl running on a pseudo-terminal of its own (its
// controlling terminal), the terminal's output gathered in out.
type ptyRun struct {
	cmd    *exec.Cmd
	master *os.File
	out    *testutil.SyncBuffer
	copied chan struct{}
	cancel context.CancelFunc
}

// startPTY starts kubectl args on a new terminal of w x h.
func (k *kubectlEnv) startPTY(t *testing.T, w, h uint16, args ...string) *ptyRun {
	t.Helper()
	master, slave := openPTY(t)
	setSize(t, master, w, h)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	t.Cleanup(cancel)
	cmd := k.command(ctx, k.kubeconfig, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	p := &ptyRun{cmd: cmd, master: master, out: &testutil.SyncBuffer{}, copied: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(p.copied)
		_, _ = io.Copy(p.out, master) // ends with EIO once kubectl is gone
	}()
	return p
}

// wait returns kubectl's exit code once it and its output have ended.
func (p *ptyRun) wait(t *testing.T) int {
	t.Helper()
	err := p.cmd.Wait()
	<-p.copied
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("kubectl on a terminal: %v; output %q", err, p.out.String())
	}
	return p.cmd.ProcessState.ExitCode()
}
