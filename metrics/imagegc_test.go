package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/berth-dev/berth/imagegc"
	"github.com/berth-dev/berth/sweep"
)

var (
	_ imagegc.Metrics = (*Metrics)(nil)
	_ sweep.Metrics   = (*Metrics)(nil)
)

func TestImageGCAndSweepSeries(t *testing.T) {
	m := New()
	m.ImageGCRemoved(100)
	m.ImageGCRemoved(50)
	m.SweepRemoved(sweep.KindPodDir)
	want := `
# HELP berth_image_gc_freed_bytes_total Bytes of the images image garbage collection removed (their sizes, shared layers included).
# TYPE berth_image_gc_freed_bytes_total counter
berth_image_gc_freed_bytes_total 150
# HELP berth_image_gc_removed_total Unused images removed by image garbage collection.
# TYPE berth_image_gc_removed_total counter
berth_image_gc_removed_total 2
# HELP berth_startup_sweep_removed_total Leftovers of earlier runs removed by the startup sweep, by kind (volume, pod_dir, image).
# TYPE berth_startup_sweep_removed_total counter
berth_startup_sweep_removed_total{kind="image"} 0
berth_startup_sweep_removed_total{kind="pod_dir"} 1
berth_startup_sweep_removed_total{kind="volume"} 0
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want),
		"berth_image_gc_freed_bytes_total", "berth_image_gc_removed_total", "berth_startup_sweep_removed_total"); err != nil {
		t.Fatal(err)
	}
}
