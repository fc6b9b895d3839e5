package nodelogs

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nodeLogsTree makes a log directory with a file, a subdirectory, a
// symlink inside it and symlinks out of it (to a secret file beside it, to
// /etc, through an intermediate directory); it returns the directory and
// the secret's content.
func nodeLogsTree(t *testing.T) (dir, secret string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "log")
	secret = "TOP-SECRET-OUTSIDE"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "apt"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "syslog"), []byte("0123456789abcdef\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "apt", "history.log"), []byte("installed\n"), 0o644))
	must(os.WriteFile(filepath.Join(base, "shadow"), []byte(secret), 0o644))
	must(os.Symlink("syslog", filepath.Join(dir, "current")))                  // inside: followed
	must(os.Symlink("../shadow", filepath.Join(dir, "up")))                    // relative, out
	must(os.Symlink(filepath.Join(base, "shadow"), filepath.Join(dir, "abs"))) // absolute, out
	must(os.Symlink("/etc", filepath.Join(dir, "etc")))                        // a directory out
	must(os.Symlink(base, filepath.Join(dir, "apt", "parent")))                // intermediate dir out
	return dir, secret
}

// rawGet sends path verbatim (no client-side cleaning or re-encoding).
func rawGet(t *testing.T, srv *httptest.Server, path string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
	for i := 0; i+1 < len(hdr); i += 2 {
		req += hdr[i] + ": " + hdr[i+1] + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// hostileLogPaths are the traversal attempts of TOB-K8S-026 and beyond.
var hostileLogPaths = []string{
	"/logs/../shadow",
	"/logs/..%2fshadow",
	"/logs/%2e%2e/shadow",
	"/logs/%2e%2e%2fshadow",
	"/logs/apt/..%2f..%2fshadow",
	"/logs/%2fetc%2fpasswd",
	"/logs//etc/passwd",
	"/logs/up",
	"/logs/abs",
	"/logs/etc/passwd",
	"/logs/etc/",
	"/logs/apt/parent/shadow",
	"/logs/apt/parent/",
}

// leaked reports a body showing what lies outside the directory: the
// secret beside it, /etc/passwd, or a listing of /etc or of the parent.
func leaked(body, secret string) bool {
	return strings.Contains(body, secret) || strings.Contains(body, "root:") ||
		strings.Contains(body, `href="passwd"`) || strings.Contains(body, `href="shadow"`)
}

func serveLogs(t *testing.T, h http.Handler) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /logs/{path...}", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// naiveLogs is what a plain http.FileServer would serve, the kubelet's
// way: the hostile paths must defeat it, or they test nothing.
func naiveLogs(dir string) http.Handler {
	return http.StripPrefix("/logs", http.FileServer(http.Dir(dir)))
}

// TestNodeLogsConfined: no hostile path reads anything outside the
// directory, where the naive file server leaks through the symlinks.
func TestNodeLogsConfined(t *testing.T) {
	dir, secret := nodeLogsTree(t)
	naive := serveLogs(t, naiveLogs(dir))
	leaks := 0
	for _, p := range hostileLogPaths {
		if _, _, body := rawGet(t, naive, p); leaked(body, secret) {
			leaks++
		}
	}
	if leaks < 7 {
		t.Fatalf("the naive file server leaked only %d paths: the attacks test nothing", leaks)
	}
	srv := serveLogs(t, Handler(dir))
	for _, p := range hostileLogPaths {
		code, _, body := rawGet(t, srv, p)
		if leaked(body, secret) || code == http.StatusOK {
			t.Errorf("%s: %d %q", p, code, body)
		}
	}
}

// TestNodeLogsServes: listings, files, a symlink inside, Range requests.
func TestNodeLogsServes(t *testing.T) {
	dir, _ := nodeLogsTree(t)
	srv := serveLogs(t, Handler(dir))
	code, hdr, body := rawGet(t, srv, "/logs/")
	if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") ||
		!strings.Contains(body, `<a href="syslog">syslog</a>`) || !strings.Contains(body, `<a href="apt/">apt/</a>`) {
		t.Fatalf("listing: %d %s", code, body)
	}
	if code, _, body = rawGet(t, srv, "/logs/apt/history.log"); code != http.StatusOK || body != "installed\n" {
		t.Fatalf("file: %d %q", code, body)
	}
	if code, _, body = rawGet(t, srv, "/logs/current"); code != http.StatusOK || body != "0123456789abcdef\n" {
		t.Fatalf("symlink inside: %d %q", code, body)
	}
	code, hdr, body = rawGet(t, srv, "/logs/syslog", "Range", "bytes=4-7")
	if code != http.StatusPartialContent || body != "4567" || hdr.Get("Content-Range") != "bytes 4-7/17" {
		t.Fatalf("range: %d %q %v", code, body, hdr)
	}
	if code, hdr, _ = rawGet(t, srv, "/logs/apt"); code != http.StatusMovedPermanently || hdr.Get("Location") != "apt/" {
		t.Fatalf("directory without slash: %d %v", code, hdr)
	}
	if code, _, _ = rawGet(t, srv, "/logs/missing"); code != http.StatusNotFound {
		t.Fatalf("missing: %d", code)
	}
	off := serveLogs(t, Handler(""))
	if code, _, _ = rawGet(t, off, "/logs/"); code != http.StatusNotFound {
		t.Fatalf("disabled: %d", code)
	}
}

// TestNodeLogsSwappedSymlink: a directory swapped for a symlink out
// between requests is not followed (every request resolves from the
// directory's descriptor, beneath it, in one call).
func TestNodeLogsSwappedSymlink(t *testing.T) {
	dir, secret := nodeLogsTree(t)
	srv := serveLogs(t, Handler(dir))
	if code, _, _ := rawGet(t, srv, "/logs/apt/history.log"); code != http.StatusOK {
		t.Fatalf("before the swap: %d", code)
	}
	if err := os.RemoveAll(filepath.Join(dir, "apt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(dir), filepath.Join(dir, "apt")); err != nil {
		t.Fatal(err)
	}
	if code, _, body := rawGet(t, srv, "/logs/apt/shadow"); code == http.StatusOK || strings.Contains(body, secret) {
		t.Fatalf("after the swap: %d %q", code, body)
	}
}
