package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNodeLogsDir: server.node_logs_dir is /var/log by default, empty in
// the file disables it, and a relative path is refused by name.
func TestNodeLogsDir(t *testing.T) {
	c, err := Load(flags(t, "--node-name", "n1"))
	if err != nil || c.NodeLogsDir != "/var/log" {
		t.Fatalf("default: %q %v", c.NodeLogsDir, err)
	}
	file := filepath.Join(t.TempDir(), "berth.yaml")
	if err := os.WriteFile(file, []byte("node_name: n1\nserver:\n  node_logs_dir: \"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err = Load(flags(t, "--config", file)); err != nil || c.NodeLogsDir != "" {
		t.Fatalf("disabled: %q %v", c.NodeLogsDir, err)
	}
	t.Setenv("BERTH_SERVER_NODE_LOGS_DIR", "var/log")
	if _, err := Load(flags(t, "--node-name", "n1")); err == nil || !strings.Contains(err.Error(), "server.node_logs_dir") {
		t.Fatalf("relative: %v", err)
	}
}
