package config

import (
	"maps"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

func withFile(t *testing.T, body string) []string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "berth.yaml")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"--node-name", "n1", "--config", file}
}

func fixedLabels(extra map[string]string) map[string]string {
	out := map[string]string{"kubernetes.io/hostname": "n1", "kubernetes.io/os": goruntime.GOOS, "kubernetes.io/arch": goruntime.GOARCH}
	maps.Copy(out, extra)
	return out
}

func TestNodeLabels(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		env  string
		want map[string]string
	}{
		{"default: the fixed three", "", "", fixedLabels(nil)},
		{"a map in the file", "node_labels:\n  disk: ssd\n  topology.kubernetes.io/zone: a\n  gpu: true\n  cores: 8\n", "",
			fixedLabels(map[string]string{"disk": "ssd", "topology.kubernetes.io/zone": "a", "gpu": "true", "cores": "8"})},
		{"a k=v list in the environment", "", "disk=ssd, zone=a,,empty=", fixedLabels(map[string]string{"disk": "ssd", "zone": "a", "empty": ""})},
		{"the environment over the file", "node_labels:\n  disk: hdd\n", "disk=ssd", fixedLabels(map[string]string{"disk": "ssd"})},
		{"a fixed label repeated with its value", "", "kubernetes.io/hostname=n1", fixedLabels(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("BERTH_NODE_LABELS", tc.env)
			if tc.env == "" {
				os.Unsetenv("BERTH_NODE_LABELS")
			}
			args := []string{"--node-name", "n1"}
			if tc.file != "" {
				args = withFile(t, tc.file)
			}
			c, err := Load(flags(t, args...))
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(c.NodeLabels, tc.want) {
				t.Fatalf("labels %v\nwant   %v", c.NodeLabels, tc.want)
			}
		})
	}
}

func TestBadNodeLabels(t *testing.T) {
	for _, tc := range []struct {
		name, file, env, want string
	}{
		{"not k=v", "", "disk", `node_labels: "disk" is not key=value`},
		{"bad key", "", "bad key=x", `node_labels: key "bad key": name part must consist of`},
		{"bad value", "", "disk=not ok", `node_labels.disk: "not ok": a valid label must be`},
		{"hostname overridden", "", "kubernetes.io/hostname=other", `node_labels.kubernetes.io/hostname: "other" cannot be set: berth always sets it to "n1"`},
		{"os overridden", "node_labels:\n  kubernetes.io/os: plan9\n", "", `node_labels.kubernetes.io/os: "plan9" cannot be set`},
		{"a list value", "node_labels:\n  disk: [a, b]\n", "", "node_labels.disk: [a b] is not a label value"},
		{"not a map", "node_labels: [a, b]\n", "", "node_labels: must be a map of label names to values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("BERTH_NODE_LABELS", tc.env)
			if tc.env == "" {
				os.Unsetenv("BERTH_NODE_LABELS")
			}
			args := []string{"--node-name", "n1"}
			if tc.file != "" {
				args = withFile(t, tc.file)
			}
			_, err := Load(flags(t, args...))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}
