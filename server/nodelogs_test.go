package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/berth-dev/berth/kubeapi"
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
	RegisterNodeLogs(s, kubeapi.NodeLogs(dir))
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
