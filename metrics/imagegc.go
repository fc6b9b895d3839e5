package metrics

import "github.com/prometheus/client_golang/prometheus"

// gcSeries are image garbage collection's and the startup sweep's series.
type gcSeries struct {
	imagesRemoved prometheus.Counter
	bytesFreed    prometheus.Counter
	sweepRemoved  *prometheus.CounterVec
}

func newGCSeries(r prometheus.Registerer) gcSeries {
	s := gcSeries{
		imagesRemoved: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "berth_image_gc_removed_total", Help: "Unused images removed by image garbage collection.",
		}),
		bytesFreed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "berth_image_gc_freed_bytes_total", Help: "Bytes of the images image garbage collection removed (their sizes, shared layers included).",
		}),
		sweepRemoved: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "berth_startup_sweep_removed_total", Help: "Leftovers of earlier runs removed by the startup sweep, by kind (volume, pod_dir, image).",
		}, []string{"kind"}),
	}
	for _, k := range []string{"volume", "pod_dir", "image"} {
		s.sweepRemoved.WithLabelValues(k)
	}
	r.MustRegister(s.imagesRemoved, s.bytesFreed, s.sweepRemoved)
	return s
}

// ImageGCRemoved implements imagegc.Metrics.
func (m *Metrics) ImageGCRemoved(bytes int64) {
	m.gc.imagesRemoved.Inc()
	m.gc.bytesFreed.Add(float64(bytes))
}

// SweepRemoved implements sweep.Metrics.
func (m *Metrics) SweepRemoved(kind string) { m.gc.sweepRemoved.WithLabelValues(kind).Inc() }
