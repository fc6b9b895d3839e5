package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/kubeapi"
	"github.com/berth-dev/berth/kubeapi/nodelogs"
	"github.com/berth-dev/berth/store"
)

// TestNodeLogsAdminOnly: /logs/ and the node's proxy/logs answer the
// admin token only; another node's name is a 404.
func TestNodeLogsAdminOnly(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "syslog"), []byte("line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, _ := store.New(nil)
	s := New(Options{Store: st, Tokens: []string{"admin"}, PushTokens: []string{"push"}})
	RegisterNodeLogs(s, nodelogs.Handler(dir))
	kube := kubeapi.New(kubeapi.Options{Store: st, Node: "node1", Visible: s.Visible})
	kube.AddNodeLogs(dir)
	RegisterKube(s, kube.Routes())
	srv := httptest.NewServer(s)
	defer srv.Close()
	for _, tc := range []struct {
		token, path string
		code        int
		body        string
	}{
		{"admin", "/logs/syslog", http.StatusOK, "line\n"},
		{"admin", "/api/v1/nodes/node1/proxy/logs/syslog", http.StatusOK, "line\n"},
		{"push", "/logs/syslog", http.StatusForbidden, ""},
		{"push", "/api/v1/nodes/node1/proxy/logs/syslog", http.StatusForbidden, ""},
		{"", "/logs/syslog", http.StatusUnauthorized, ""},
		{"", "/api/v1/nodes/node1/proxy/logs/syslog", http.StatusUnauthorized, ""},
		{"admin", "/api/v1/nodes/other/proxy/logs/syslog", http.StatusNotFound, ""},
	} {
		code, b := do(t, "GET", srv.URL+tc.path, tc.token, nil)
		if code != tc.code || (tc.body != "" && b != tc.body) {
			t.Errorf("%s with %q: %d %q, want %d", tc.path, tc.token, code, b, tc.code)
		}
	}
}

// TestNodeLogsNeverAnonymous: on a server without admin tokens, the open
// scope (anyone on the host who reaches the loopback port) reads no node
// log, root-only ones included, and push tokens none either; the refusal
// says how to enable them.
func TestNodeLogsNeverAnonymous(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "auth.log"), []byte("root only\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, _ := store.New(nil)
	s := New(Options{Store: st, PushTokens: []string{"push"}})
	RegisterNodeLogs(s, nodelogs.Handler(dir))
	kube := kubeapi.New(kubeapi.Options{Store: st, Node: "node1", Visible: s.Visible})
	kube.AddNodeLogs(dir)
	RegisterKube(s, kube.Routes())
	srv := httptest.NewServer(s)
	defer srv.Close()
	for _, token := range []string{"", "push"} {
		for _, path := range []string{"/logs/auth.log", "/logs/", "/api/v1/nodes/node1/proxy/logs/auth.log"} {
			code, b := do(t, "GET", srv.URL+path, token, nil)
			if code != http.StatusForbidden || strings.Contains(b, "root only") {
				t.Errorf("%s with %q: %d %q, want 403", path, token, code, b)
			}
			if token == "" && !strings.Contains(b, "server.token_file") {
				t.Errorf("%s: the refusal does not name server.token_file: %q", path, b)
			}
		}
	}
}
