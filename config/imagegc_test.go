package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestImageGCThresholds(t *testing.T) {
	c, err := Load(flags(t, "--node-name", "n1"))
	if err != nil {
		t.Fatal(err)
	}
	if c.ImageGCHighThreshold != 85 || c.ImageGCLowThreshold != 80 {
		t.Errorf("defaults high %d low %d, want the kubelet's 85 and 80", c.ImageGCHighThreshold, c.ImageGCLowThreshold)
	}

	file := filepath.Join(t.TempDir(), "berth.yaml")
	if err := os.WriteFile(file, []byte("node_name: n1\nimage_gc:\n  high_threshold: 100\n  low_threshold: 90\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = Load(flags(t, "--config", file))
	if err != nil {
		t.Fatal(err)
	}
	if c.ImageGCHighThreshold != 100 || c.ImageGCLowThreshold != 90 {
		t.Errorf("from the file: high %d low %d, want 100 and 90", c.ImageGCHighThreshold, c.ImageGCLowThreshold)
	}
}

func TestImageGCBadThresholdsNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		high, low, want string
	}{
		{"101", "80", "image_gc.high_threshold: 101 is outside 0..100"},
		{"85", "-1", "image_gc.low_threshold: -1 is outside 0..100"},
		{"85%", "80", `image_gc.high_threshold: "85%" is not an integer`},
		{"80", "80", "image_gc.low_threshold: 80 must be below image_gc.high_threshold 80"},
		{"50", "90", "image_gc.low_threshold: 90 must be below image_gc.high_threshold 50"},
	} {
		t.Run(tc.high+"_"+tc.low, func(t *testing.T) {
			t.Setenv("BERTH_IMAGE_GC_HIGH_THRESHOLD", tc.high)
			t.Setenv("BERTH_IMAGE_GC_LOW_THRESHOLD", tc.low)
			_, err := Load(flags(t, "--node-name", "n1"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
