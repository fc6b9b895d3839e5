package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcdServer is a real etcd (Debian's etcd-server binary) on loopback ports,
// restartable on the same data directory.
type etcdServer struct {
	tb        testing.TB
	dataDir   string
	clientURL string
	peerURL   string
	logPath   string
	cmd       *exec.Cmd
	exited    chan struct{}
}

func startEtcd(tb testing.TB) *etcdServer {
	tb.Helper()
	if _, err := exec.LookPath("etcd"); err != nil {
		tb.Fatalf("etcd binary not found (scripts/ensure-deps.sh installs Debian's etcd-server): %v", err)
	}
	dir := tb.TempDir()
	e := &etcdServer{tb: tb, dataDir: filepath.Join(dir, "data"), logPath: filepath.Join(dir, "etcd.log"),
		clientURL: fmt.Sprintf("http://127.0.0.1:%d", freePort(tb)), peerURL: fmt.Sprintf("http://127.0.0.1:%d", freePort(tb))}
	tb.Cleanup(func() {
		e.Stop()
		if tb.Failed() {
			if b, err := os.ReadFile(e.logPath); err == nil {
				if len(b) > 3000 {
					b = b[len(b)-3000:]
				}
				tb.Logf("etcd log tail:\n%s", b)
			}
		}
	})
	e.Start()
	return e
}

// Start runs etcd and waits until it is healthy.
func (e *etcdServer) Start() {
	e.tb.Helper()
	logf, err := os.OpenFile(e.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		e.tb.Fatal(err)
	}
	e.cmd = exec.Command("etcd", "--name", "default", "--data-dir", e.dataDir,
		"--listen-client-urls", e.clientURL, "--advertise-client-urls", e.clientURL,
		"--listen-peer-urls", e.peerURL, "--initial-advertise-peer-urls", e.peerURL,
		"--initial-cluster", "default="+e.peerURL)
	e.cmd.Stdout, e.cmd.Stderr = logf, logf
	e.cmd.Env = append(os.Environ(), "ETCD_UNSUPPORTED_ARCH="+runtime.GOARCH)
	if err := e.cmd.Start(); err != nil {
		logf.Close()
		e.tb.Fatalf("start etcd: %v", err)
	}
	exited := make(chan struct{})
	e.exited = exited
	go func(cmd *exec.Cmd) { _ = cmd.Wait(); logf.Close(); close(exited) }(e.cmd)
	waitFor(e.tb, 20*time.Second, "etcd healthy", func() (bool, string) {
		resp, err := http.Get(e.clientURL + "/health")
		if err != nil {
			return false, err.Error()
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode == 200 && bytes.Contains(b, []byte(`"true"`)), string(b)
	})
}

// Stop kills etcd, as a crash would.
func (e *etcdServer) Stop() {
	if e.cmd == nil {
		return
	}
	_ = e.cmd.Process.Kill()
	<-e.exited
	e.cmd = nil
}

func (e *etcdServer) client() *clientv3.Client {
	e.tb.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.clientURL}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		e.tb.Fatal(err)
	}
	e.tb.Cleanup(func() { c.Close() })
	return c
}

func (e *etcdServer) put(key, value string) {
	e.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.client().Put(ctx, key, value); err != nil {
		e.tb.Fatalf("etcd put %s: %v", key, err)
	}
}

func (e *etcdServer) del(key string) {
	e.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.client().Delete(ctx, key); err != nil {
		e.tb.Fatalf("etcd delete %s: %v", key, err)
	}
}

func (e *etcdServer) count(prefix string) int64 {
	e.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := e.client().Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		e.tb.Fatalf("etcd count %s: %v", prefix, err)
	}
	return resp.Count
}
