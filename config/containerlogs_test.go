package config

import (
	"strings"
	"testing"
)

func TestContainerLogRotation(t *testing.T) {
	c, err := Load(flags(t, "--node-name", "n1"))
	if err != nil {
		t.Fatal(err)
	}
	if c.ContainerLogMaxSize != 10<<20 || c.ContainerLogMaxFiles != 5 {
		t.Errorf("defaults %d bytes x %d files, want the kubelet's 10Mi x 5", c.ContainerLogMaxSize, c.ContainerLogMaxFiles)
	}
	for raw, want := range map[string]int64{"20Mi": 20 << 20, "20m": 20 << 20, "20mb": 20 << 20, "1g": 1 << 30, "512k": 512 << 10,
		"1Ki": 1 << 10, "10M": 10_000_000, "1.5Mi": 3 << 19, "1048576": 1 << 20, " 2Gi ": 2 << 30} {
		t.Setenv("BERTH_CONTAINER_LOG_MAX_SIZE", raw)
		t.Setenv("BERTH_CONTAINER_LOG_MAX_FILES", "2")
		c, err := Load(flags(t, "--node-name", "n1"))
		if err != nil || c.ContainerLogMaxSize != want || c.ContainerLogMaxFiles != 2 {
			t.Errorf("%q: %v %v, want %d bytes x 2", raw, c, err, want)
		}
	}
	for _, tc := range []struct{ size, files, msg string }{
		{"10x", "5", `container_log_max_size: "10x" is not a size`},
		{"10MB", "5", `container_log_max_size: "10MB" is not a size`},
		{"1.5m", "5", `container_log_max_size: "1.5m" is below the minimum 1Ki`}, // a quantity: 0.0015 bytes
		{"2Ti", "5", `container_log_max_size: "2Ti" is above the maximum 1Ti`},
		{"100E", "5", `container_log_max_size: "100E" is above the maximum 1Ti`},
		{"512", "5", `container_log_max_size: "512" is below the minimum 1Ki`},
		{"0", "5", `container_log_max_size: "0" is below the minimum 1Ki`},
		{"-1Mi", "5", `container_log_max_size: "-1Mi" is below the minimum 1Ki`},
		{"99999999999g", "5", `container_log_max_size: "99999999999g" is above the maximum 1Ti`},
		{"99999999999999999999k", "5", `container_log_max_size: "99999999999999999999k" is above the maximum 1Ti`},
		{"2000g", "5", `container_log_max_size: "2000g" is above the maximum 1Ti`},
		{"10Mi", "1", "container_log_max_files: 1 is outside 2..1000"},
		{"10Mi", "1001", "container_log_max_files: 1001 is outside 2..1000"},
		{"10Mi", "x", `container_log_max_files: "x" is not an integer`},
	} {
		t.Setenv("BERTH_CONTAINER_LOG_MAX_SIZE", tc.size)
		t.Setenv("BERTH_CONTAINER_LOG_MAX_FILES", tc.files)
		if _, err := Load(flags(t, "--node-name", "n1")); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("size %q files %q: %v, want %q", tc.size, tc.files, err, tc.msg)
		}
	}
}
