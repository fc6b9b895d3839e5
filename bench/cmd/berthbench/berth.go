package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/berth-dev/berth/bench/internal/benchkit"
)

// berthProc is one `berth run` subprocess with its own node name, pods
// directory, root_dir, API port and log file.
type berthProc struct {
	*benchkit.Proc
	node, pods, root, log string
	b                     *bench
}

// metricTimeout bounds one read of berth's /metrics.
const metricTimeout = 5 * time.Second

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
	port, err := benchkit.FreePort()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	cfg := benchkit.Berth{Bin: b.berthBin, Node: node, RootDir: p.root, PodsDir: p.pods, Port: port,
		DockerHost: b.dockerHost, Env: env}
	if p.Proc, err = cfg.Start(logFile); err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.procs[p] = true
	b.mu.Unlock()
	if err := p.WaitReady(ctx, 30*time.Second, 50*time.Millisecond); err != nil {
		switch {
		case errors.Is(err, benchkit.ErrExited):
			err = fmt.Errorf("%w:\n%s", err, p.logTail())
		case errors.Is(err, benchkit.ErrNotReady):
			err = fmt.Errorf("%w\n%s", err, p.logTail())
		}
		b.finishBerth(p)
		return nil, err
	}
	return p, nil
}

// stop stops berth (SIGTERM, killed after 20 s) unless it was stopped
// already. berth leaves its pods running when it exits; finishBerth
// removes them.
func (p *berthProc) stop() {
	b := p.b
	b.mu.Lock()
	running := b.procs[p]
	delete(b.procs, p)
	b.mu.Unlock()
	if !running {
		return
	}
	p.Stop(20*time.Second, func() { logf("berth %s did not exit within 20s of SIGTERM; killing it", p.node) })
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

func (p *berthProc) logTail() string { return benchkit.LogTail(p.log, 4000) }

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
