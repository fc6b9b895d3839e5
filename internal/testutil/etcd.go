package testutil

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Etcd is a real etcd process (Debian's etcd-server, or $BERTH_TEST_ETCD) on
// free loopback ports, restartable on the same data directory. It is killed
// when the test ends.
type Etcd struct {
	tb        testing.TB
	bin       string
	dataDir   string
	ClientURL string
	peerURL   string
	LogPath   string
	cmd       *exec.Cmd
	exited    chan struct{}
}

// EtcdBinary finds etcd; without one the test fails (these tests exist to
// cover a real etcd), except under -short, where it is skipped.
func EtcdBinary(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("BERTH_TEST_ETCD"); p != "" {
		return p
	}
	p, err := exec.LookPath("etcd")
	if err != nil {
		if testing.Short() {
			tb.Skip("etcd binary not found (skipped under -short)")
		}
		tb.Fatalf("etcd binary not found (%v): install Debian's etcd-server (scripts/ensure-deps.sh does), "+
			"set BERTH_TEST_ETCD, or run with -short", err)
	}
	return p
}

// NewEtcd prepares an etcd without starting it.
func NewEtcd(tb testing.TB) *Etcd {
	tb.Helper()
	dir := tb.TempDir()
	e := &Etcd{tb: tb, bin: EtcdBinary(tb), dataDir: filepath.Join(dir, "data"), LogPath: filepath.Join(dir, "etcd.log"),
		ClientURL: fmt.Sprintf("http://127.0.0.1:%d", StablePort(tb)), peerURL: fmt.Sprintf("http://127.0.0.1:%d", StablePort(tb))}
	tb.Cleanup(func() {
		e.Stop()
		if tb.Failed() {
			logTail(tb, "etcd", e.LogPath)
		}
	})
	return e
}

// StartEtcd starts a fresh etcd and waits until it is healthy.
func StartEtcd(tb testing.TB) *Etcd {
	tb.Helper()
	e := NewEtcd(tb)
	e.Start()
	return e
}

// Start runs etcd and waits (up to 15 s) until it reports healthy.
func (e *Etcd) Start() {
	e.tb.Helper()
	e.startWith(e.ClientURL, nil, plainHealthClient)
}

// Stop kills etcd, as a crash would, and waits for it to exit.
func (e *Etcd) Stop() {
	if e.cmd == nil {
		return
	}
	_ = e.cmd.Process.Kill()
	<-e.exited
	e.cmd = nil
}

// Client returns a client for the test's own reads and writes, closed when
// the test ends.
func (e *Etcd) Client() *clientv3.Client {
	e.tb.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		e.tb.Fatal(err)
	}
	e.tb.Cleanup(func() { c.Close() })
	return c
}

// Put writes key, failing the test on error.
func (e *Etcd) Put(key, value string) {
	e.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.Client().Put(ctx, key, value); err != nil {
		e.tb.Fatalf("etcd put %s: %v", key, err)
	}
}

// Delete removes key, failing the test on error.
func (e *Etcd) Delete(key string) {
	e.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.Client().Delete(ctx, key); err != nil {
		e.tb.Fatalf("etcd delete %s: %v", key, err)
	}
}

// Count returns the number of keys under prefix.
func (e *Etcd) Count(prefix string) int64 {
	e.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := e.Client().Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		e.tb.Fatalf("etcd count %s: %v", prefix, err)
	}
	return resp.Count
}
