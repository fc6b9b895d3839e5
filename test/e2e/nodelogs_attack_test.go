package e2e

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNodeLogsAttack: a berth without server.token_file (the default
// loopback setup) serves the node's logs to nobody: a local user without a
// token, or a push client, reads no root-only file through /logs/ or the
// node's proxy/logs. A request addressed to another name, as a web page
// rebound to 127.0.0.1 sends it, is refused on every route.
func TestNodeLogsAttack(t *testing.T) {
	logs := t.TempDir()
	if err := os.WriteFile(filepath.Join(logs, "auth.log"), []byte("sshd: root password accepted\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pushFile, push := writeToken(t, "push")
	b := startBerth(t, Options{Env: []string{"BERTH_SERVER_NODE_LOGS_DIR=" + logs,
		"BERTH_SOURCES_PUSH_ENABLED=true", "BERTH_SOURCES_PUSH_TOKEN_FILE=" + pushFile}})
	for _, token := range []string{"", push} {
		for _, path := range []string{"/logs/auth.log", "/logs/", "/api/v1/nodes/" + b.Node + "/proxy/logs/auth.log"} {
			code, body := authDo(t, "GET", b.URL(path), token, "")
			if code != http.StatusForbidden || strings.Contains(body, "root password") || strings.Contains(body, "auth.log") {
				t.Errorf("GET %s (token %q): %d %q, want 403", path, token, code, body)
			}
		}
	}
	if code, body := authDo(t, "GET", b.URL("/logs/auth.log"), "", ""); !strings.Contains(body, "server.token_file") {
		t.Errorf("the refusal does not say how to enable node logs: %d %q", code, body)
	}

	get := func(host, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", b.URL(path), nil)
		req.Host = host
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, path := range []string{"/pods", "/events", "/api/v1/pods", "/metrics"} {
		if code, body := get("rebound.example:10350", path); code != http.StatusForbidden {
			t.Errorf("GET %s with Host rebound.example: %d %.200q, want 403", path, code, body)
		}
		if code, body := get("localhost", path); code != http.StatusOK {
			t.Errorf("GET %s with Host localhost: %d %.200q, want 200", path, code, body)
		}
	}
}
