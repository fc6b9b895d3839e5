// Package testutil holds what berth's tests share: free ports, the module
// root, static builds of the repository's programs, and a real etcd.
package testutil

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// StablePort returns a free loopback TCP port below the kernel's ephemeral
// range, for a server the test stops and starts again on the same port (etcd).
// A FreePort port lies inside that range, so while its server is down any
// outgoing connection or ":0" listener may be given it, and the restart fails
// with "address already in use" (seen in CI). Ports are not handed out twice
// in one test binary.
func StablePort(tb testing.TB) int {
	tb.Helper()
	lo := ephemeralLow()
	stableMu.Lock()
	defer stableMu.Unlock()
	for range 1000 {
		p := stableBase + rand.IntN(lo-stableBase)
		if stableTaken[p] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		ln.Close()
		stableTaken[p] = true
		return p
	}
	tb.Fatalf("no free port in [%d, %d)", stableBase, lo)
	return 0
}

const stableBase = 20000

var (
	stableMu    sync.Mutex
	stableTaken = map[int]bool{}
)

// ephemeralLow is the first port of net.ipv4.ip_local_port_range (32768 when
// it cannot be read, the kernel's default).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > stableBase+1000 {
				return n
			}
		}
	}
	return 32768
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

var (
	rootOnce sync.Once
	root     string
	rootErr  error
)

// ModuleDir returns the directory of berth's go.mod.
func ModuleDir() (string, error) {
	rootOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		gomod := strings.TrimSpace(string(out))
		switch {
		case err != nil:
			rootErr = fmt.Errorf("go env GOMOD: %w", err)
		case gomod == "" || gomod == os.DevNull:
			rootErr = errors.New("go env GOMOD: not inside the berth module")
		default:
			root = filepath.Dir(gomod)
		}
	})
	return root, rootErr
}

// ModuleRoot is ModuleDir for a test, failing it on error.
func ModuleRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := ModuleDir()
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}

// BuildStatic compiles the package pkg (relative to the module root, e.g.
// "." or "./test/testapp") with CGO_ENABLED=0 into the file out.
func BuildStatic(ctx context.Context, pkg, out string) error {
	dir, err := ModuleDir()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// Build is BuildStatic of pkg into dir/name for a test, failing it on error;
// it returns the path.
func Build(tb testing.TB, dir, pkg, name string) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	if err := BuildStatic(context.Background(), pkg, path); err != nil {
		tb.Fatal(err)
	}
	return path
}

// WaitFor polls cond every millisecond until it holds, and fails the test
// naming what it waited for if it does not within d.
func WaitFor(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s", d, what)
		}
	}
}
