package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// berthProc is one `berth run` subprocess with its own node name, pods
// directory, root_dir, API port and log file.
type berthProc struct {
	node, pods, root, log string
	port                  int
	cmd                   *exec.Cmd
	done                  chan struct{} // closed when the process exited
	b                     *bench
}

// startBerth starts berth on a fresh pods dir and root dir and waits until
// /readyz answers 200. env holds extra KEY=VALUE settings (BERTH_...),
// which override the defaults set here.
func (b *bench) startBerth(ctx context.Context, node string, env []string) (*berthProc, error) {
	dir, err := os.MkdirTemp(b.work, node+"-")
	if err != nil {
		return nil, err
	}
	p := &berthProc{node: node, pods: filepath.Join(dir, "pods"), root: filepath.Join(dir, "root"),
		log: filepath.Join(dir, "berth.log"), b: b}
	for _, d := range []string{p.pods, p.root} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
	}
	if p.port, err = freePort(); err != nil {
		return nil, err
	}
	logFile, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(b.berthBin, "run")
	cmd.Env = append(berthlessEnv(),
		"BERTH_NODE_NAME="+node,
		"BERTH_ROOT_DIR="+p.root,
		"BERTH_SOURCES_FILE_PATH="+p.pods,
		"BERTH_SERVER_ADDRESS=127.0.0.1",
		"BERTH_SERVER_PORT="+strconv.Itoa(p.port),
		"BERTH_CADVISOR_ENABLED=false",
		"BERTH_DOCKER_HOST="+b.dockerHost,
	)
	cmd.Env = append(cmd.Env, env...) // later entries win
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group: a Ctrl-C reaches only berthbench, which then
	// stops berth and cleans up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start berth: %w", err)
	}
	p.cmd, p.done = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	b.mu.Lock()
	b.procs[p] = true
	b.mu.Unlock()
	if err := p.waitReady(ctx, 30*time.Second); err != nil {
		b.finishBerth(p)
		return nil, err
	}
	return p, nil
}

func (p *berthProc) url(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", p.port, path)
}

func (p *berthProc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *berthProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *berthProc) waitReady(ctx context.Context, timeout time.Duration) error {
	c := http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		select {
		case <-p.done:
			return fmt.Errorf("berth exited before it was ready:\n%s", p.logTail())
		default:
		}
		resp, err := c.Get(p.url("/readyz"))
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
			return fmt.Errorf("berth not ready after %s: %s\n%s", timeout, last, p.logTail())
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// stop sends SIGTERM and waits up to 20 s, then kills. berth leaves its pods
// running when it exits; finishBerth removes them.
func (p *berthProc) stop() {
	b := p.b
	b.mu.Lock()
	running := b.procs[p]
	delete(b.procs, p)
	b.mu.Unlock()
	if !running {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(20 * time.Second):
	}
	logf("berth %s did not exit within 20s of SIGTERM; killing it", p.node)
	_ = p.cmd.Process.Kill()
	<-p.done
}

// finishBerth stops berth and force-removes every container of its node.
func (b *bench) finishBerth(p *berthProc) {
	p.stop()
	ctx, cancel := cleanupCtx()
	defer cancel()
	if _, err := b.removeAll(ctx, map[string]string{nodeLabel: p.node}); err != nil {
		logf("remove containers of %s: %v", p.node, err)
	}
}

// metric returns the value of an exact series from berth's /metrics.
func (p *berthProc) metric(series string) (float64, bool) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(p.url("/metrics"))
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

func (p *berthProc) logTail() string {
	data, _ := os.ReadFile(p.log)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}

// writePod writes <name>.yaml atomically (hidden temp file, then rename),
// as an operator or a config tool would.
func (p *berthProc) writePod(name, content string) error {
	tmp := filepath.Join(p.pods, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(p.pods, name+".yaml"))
}

// podYAML is the benchmark pod as users write them: one app container
// running `testapp sleep` that publishes containerPort 8080 on hostPort (plus
// the sandbox berth adds, which holds the port).
func podYAML(name string, hostPort int) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 2
  containers:
    - name: app
      image: %q
      args: ["sleep"]
      ports:
        - containerPort: 8080
          hostPort: %d
`, name, testImage, hostPort)
}

// appPort is the container port every benchmark pod publishes.
const appPort = 8080

// podName names the i-th pod of the direct and compose baselines (their
// container names carry the run id).
func podName(i int) string { return fmt.Sprintf("p%03d", i) }

// podName names the i-th pod of this berth. The name carries the node's run
// id and scenario: berth's Docker names (berth_<ctr>_<pod>_<ns>_<uid8>_<n>)
// do not include the node and its UIDs derive from source, namespace and
// name, so equal pod names of two berths on one engine collide, and a
// leftover container of another node would block the pod.
func (p *berthProc) podName(i int) string {
	return fmt.Sprintf("%s-%03d", strings.TrimPrefix(p.node, "bb-"), i)
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

func randHex(n int) string {
	buf := make([]byte, n)
	if _, err := rand.Read(buf); err != nil {
		panic(err)
	}
	return hex.EncodeToString(buf)
}
