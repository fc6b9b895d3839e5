// Package testutil holds what berth's tests share: free ports, the module
// root, static builds of the repository's programs, and a real etcd.
package testutil

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

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

// ModuleRoot returns the directory of berth's go.mod.
func ModuleRoot(tb testing.TB) string {
	tb.Helper()
	rootOnce.Do(func() {
		var out []byte
		out, rootErr = exec.Command("go", "env", "GOMOD").Output()
		root = filepath.Dir(strings.TrimSpace(string(out)))
	})
	if rootErr != nil {
		tb.Fatalf("go env GOMOD: %v", rootErr)
	}
	return root
}

// Build compiles the package pkg (relative to the module root, e.g. "." or
// "./test/testapp") statically into dir/name and returns the path.
func Build(tb testing.TB, dir, pkg, name string) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", path, pkg)
	cmd.Dir = ModuleRoot(tb)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return path
}
