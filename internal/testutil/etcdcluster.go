package testutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// EtcdCluster is a cluster of real etcd processes on free loopback ports,
// whose members can be killed and restarted on their data directories. All
// of them are killed when the test ends.
type EtcdCluster struct {
	tb      testing.TB
	bin     string
	members []*clusterMember
}

type clusterMember struct {
	name, dataDir, logPath string
	clientURL, peerURL     string
	args                   []string
	cmd                    *exec.Cmd
	exited                 chan struct{}
}

var clusterSeq atomic.Int64

// StartEtcdCluster starts an n-member cluster (members m0..m{n-1}) and waits
// (up to 30 s) until every member reports healthy.
func StartEtcdCluster(tb testing.TB, n int) *EtcdCluster {
	tb.Helper()
	if n < 1 {
		tb.Fatalf("StartEtcdCluster: n = %d", n)
	}
	c := &EtcdCluster{tb: tb, bin: EtcdBinary(tb)}
	dir := tb.TempDir()
	var peers []string
	for i := range n {
		m := &clusterMember{name: fmt.Sprintf("m%d", i),
			dataDir: filepath.Join(dir, fmt.Sprintf("m%d.data", i)), logPath: filepath.Join(dir, fmt.Sprintf("m%d.log", i)),
			clientURL: fmt.Sprintf("http://127.0.0.1:%d", StablePort(tb)), peerURL: fmt.Sprintf("http://127.0.0.1:%d", StablePort(tb))}
		c.members = append(c.members, m)
		peers = append(peers, m.name+"="+m.peerURL)
	}
	token := fmt.Sprintf("berth-test-%d-%d-%d", os.Getpid(), clusterSeq.Add(1), time.Now().UnixNano())
	for _, m := range c.members {
		m.args = []string{"--name", m.name, "--data-dir", m.dataDir,
			"--listen-client-urls", m.clientURL, "--advertise-client-urls", m.clientURL,
			"--listen-peer-urls", m.peerURL, "--initial-advertise-peer-urls", m.peerURL,
			"--initial-cluster", strings.Join(peers, ","),
			"--initial-cluster-state", "new", "--initial-cluster-token", token}
	}
	tb.Cleanup(func() {
		for i := range c.members {
			c.stop(i)
		}
		if tb.Failed() {
			for _, m := range c.members {
				logTail(tb, "etcd "+m.name, m.logPath)
			}
		}
	})
	// A member cannot become healthy without a quorum, so start them all
	// before waiting for any.
	for i := range c.members {
		c.spawn(i)
	}
	deadline := time.Now().Add(30 * time.Second)
	for i := range c.members {
		c.waitHealthy(i, deadline)
	}
	return c
}

// Endpoints returns the members' client URLs, in member order.
func (c *EtcdCluster) Endpoints() []string {
	eps := make([]string, len(c.members))
	for i, m := range c.members {
		eps[i] = m.clientURL
	}
	return eps
}

// Client returns a client of all members, closed when the test ends.
func (c *EtcdCluster) Client() *clientv3.Client {
	c.tb.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		c.tb.Fatal(err)
	}
	c.tb.Cleanup(func() { cli.Close() })
	return cli
}

// Leader returns the index of the member that, answering Status itself,
// reports being the leader; it is an error if no reachable member does.
func (c *EtcdCluster) Leader(ctx context.Context) (int, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return -1, err
	}
	defer cli.Close()
	type answer struct {
		leader bool
		err    error
	}
	answers := make([]answer, len(c.members))
	var wg sync.WaitGroup
	for i, m := range c.members {
		wg.Go(func() {
			// A dead member would hold the call until ctx ends.
			sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			st, err := cli.Status(sctx, m.clientURL)
			if err != nil {
				answers[i].err = fmt.Errorf("%s: %w", m.name, err)
				return
			}
			answers[i].leader = st.Leader != 0 && st.Leader == st.Header.MemberId
		})
	}
	wg.Wait()
	var errs []error
	for i, a := range answers {
		if a.leader {
			return i, nil
		}
		if a.err != nil {
			errs = append(errs, a.err)
		}
	}
	return -1, fmt.Errorf("no member reports being the leader: %w", errors.Join(errs...))
}

// StopMember kills member i, as a crash would, and waits for it to exit.
func (c *EtcdCluster) StopMember(i int) { c.stop(i) }

// StartMember restarts member i on its data directory, with the flags it
// was first started with, and waits (up to 30 s) until it reports healthy.
func (c *EtcdCluster) StartMember(i int) {
	c.tb.Helper()
	if c.members[i].cmd != nil {
		c.tb.Fatalf("etcd %s is already running", c.members[i].name)
	}
	c.spawn(i)
	c.waitHealthy(i, time.Now().Add(30*time.Second))
}

func (c *EtcdCluster) spawn(i int) {
	c.tb.Helper()
	m := c.members[i]
	cmd, exited, err := spawnEtcd(c.bin, m.logPath, m.args)
	if err != nil {
		c.tb.Fatalf("starting etcd %s: %v", m.name, err)
	}
	m.cmd, m.exited = cmd, exited
}

func (c *EtcdCluster) waitHealthy(i int, deadline time.Time) {
	c.tb.Helper()
	m := c.members[i]
	if err := waitEtcdHealthy(plainHealthClient, m.clientURL, m.exited, deadline); err != nil {
		c.tb.Fatalf("etcd %s: %v (see log %s)", m.name, err, m.logPath)
	}
}

func (c *EtcdCluster) stop(i int) {
	m := c.members[i]
	if m.cmd == nil {
		return
	}
	_ = m.cmd.Process.Kill()
	<-m.exited
	m.cmd = nil
}

// Wipe kills etcd if it runs and removes its data directory, so that the
// next start is a fresh single-member cluster.
func (e *Etcd) Wipe() {
	e.tb.Helper()
	e.Stop()
	if err := os.RemoveAll(e.dataDir); err != nil {
		e.tb.Fatal(err)
	}
}

// StartOn is Start, but listening on and advertising clientURL instead of
// e.ClientURL (which stays unserved until a later Start).
func (e *Etcd) StartOn(clientURL string) {
	e.tb.Helper()
	e.startWith(clientURL, nil, plainHealthClient)
}

// startWith runs etcd on e's data dir and peer URL serving clients at
// clientURL, with extra flags, and waits (up to 15 s) until hc gets a
// healthy answer from it.
func (e *Etcd) startWith(clientURL string, extra []string, hc *http.Client) {
	e.tb.Helper()
	if e.cmd != nil {
		e.tb.Fatal("etcd is already running")
	}
	args := append([]string{"--name", "default", "--data-dir", e.dataDir,
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", e.peerURL, "--initial-advertise-peer-urls", e.peerURL,
		"--initial-cluster", "default=" + e.peerURL}, extra...)
	deadline := time.Now().Add(15 * time.Second)
	for attempt := 1; ; attempt++ {
		logStart := fileSize(e.LogPath)
		cmd, exited, err := spawnEtcd(e.bin, e.LogPath, args)
		if err != nil {
			e.tb.Fatalf("starting etcd: %v", err)
		}
		e.cmd, e.exited = cmd, exited
		err = waitEtcdHealthy(hc, clientURL, exited, deadline)
		if err == nil {
			return
		}
		// A port of a stopped etcd can still be held a moment by a socket
		// the kernel has not released; try again rather than fail the test.
		if attempt < 5 && time.Now().Before(deadline) && bindFailed(e.LogPath, logStart) {
			e.Stop()
			time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
			continue
		}
		e.tb.Fatalf("etcd: %v (see log %s)", err, e.LogPath)
	}
}

// fileSize is the size of the file at path, 0 if it does not exist.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// bindFailed reports whether the log written after offset says a listener
// could not bind.
func bindFailed(path string, offset int64) bool {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) < offset {
		return false
	}
	return bytes.Contains(b[offset:], []byte("address already in use"))
}

// plainHealthClient is for /health over http; the timeout keeps one stuck
// request from eating the whole startup deadline.
var plainHealthClient = &http.Client{Timeout: 2 * time.Second}

// spawnEtcd starts bin with args, appending its output to logPath; exited is
// closed once the process has been reaped.
func spawnEtcd(bin, logPath string, args []string) (cmd *exec.Cmd, exited chan struct{}, err error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	cmd = exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "ETCD_UNSUPPORTED_ARCH="+runtime.GOARCH)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, nil, err
	}
	exited = make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	return cmd, exited, nil
}

// waitEtcdHealthy polls clientURL/health until it says true, the process
// exits, or deadline passes.
func waitEtcdHealthy(hc *http.Client, clientURL string, exited <-chan struct{}, deadline time.Time) error {
	var last error
	for {
		resp, err := hc.Get(clientURL + "/health")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && bytes.Contains(b, []byte(`"true"`)) {
				return nil
			}
			err = fmt.Errorf("/health: %s: %s", resp.Status, bytes.TrimSpace(b))
		}
		last = err
		select {
		case <-exited:
			return errors.New("exited during startup")
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not healthy in time: %v", last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logTail logs the last 4000 bytes of the file at path.
func logTail(tb testing.TB, what, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	tb.Logf("%s log tail:\n%s", what, b)
}
