// Package metrics owns berth's Prometheus registry. It implements the small
// reporting interfaces of controller/ and informer/, which stay unaware of
// Prometheus.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics holds every berth_ collector and the registry they live in.
type Metrics struct {
	Registry *prometheus.Registry
	// ProbeRegistry holds the kubelet's per-container prober_ series
	// (/metrics/probes), apart from Registry as in the kubelet.
	ProbeRegistry *prometheus.Registry
	probes        probeSeries
	etcd          etcdSeries
	gc            gcSeries

	reconcileTotal    *prometheus.CounterVec
	reconcileDuration prometheus.Histogram
	podStart          prometheus.Histogram
	restarts          prometheus.Counter
	imagePulls        *prometheus.CounterVec
	sourceUpdates     *prometheus.CounterVec
	sourceErrors      *prometheus.CounterVec
	sourceLastSync    *prometheus.GaugeVec
	manifestErrors    *prometheus.CounterVec
	dockerEvents      *prometheus.CounterVec
	streamRestarts    prometheus.Counter
	probeResults      *prometheus.CounterVec
}

// New registers the Go, process and berth collectors on a fresh registry.
func New() *Metrics {
	r := prometheus.NewRegistry()
	m := &Metrics{
		Registry: r,
		reconcileTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "berth_reconcile_total", Help: "Reconciles of a pod key, by result.",
		}, []string{"result"}),
		reconcileDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "berth_reconcile_duration_seconds", Help: "Time spent in one reconcile of a pod key.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}),
		podStart: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "berth_pod_start_duration_seconds", Help: "From desired pod first seen to all its containers running.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 14),
		}),
		restarts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "berth_container_restarts_total", Help: "Containers restarted after they exited.",
		}),
		imagePulls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "berth_image_pulls_total", Help: "Image pulls, by result.",
		}, []string{"result"}),
		sourceUpdates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "berth_source_updates_total", Help: "Complete updates applied from a source.",
		}, []string{"source"}),
		sourceErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "berth_source_errors_total", Help: "Failures to read a source (the last good set stays).",
		}, []string{"source"}),
		sourceLastSync: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "berth_source_last_sync_timestamp_seconds", Help: "Unix time of the last complete update from a source.",
		}, []string{"source"}),
		manifestErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "berth_manifest_errors_total", Help: "Newly seen manifest or pod rejections, by source.",
		}, []string{"source"}),
		dockerEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "berth_docker_events_total", Help: "Docker events of managed containers, by action.",
		}, []string{"action"}),
		streamRestarts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "berth_docker_event_stream_restarts_total", Help: "Reconnections of the Docker event stream (each with a full relist).",
		}),
		probeResults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "berth_probe_results_total", Help: "Probe results, by probe type and result.",
		}, []string{"probe", "result"}),
	}
	// Known label values start at zero, so rates and alerts work from the
	// first scrape.
	for _, res := range []string{"success", "error", "requeue", "requeue_after"} {
		m.reconcileTotal.WithLabelValues(res)
	}
	for _, res := range []string{"success", "failure"} {
		m.imagePulls.WithLabelValues(res)
		for _, probe := range []string{"liveness", "readiness", "startup"} {
			m.probeResults.WithLabelValues(probe, res)
		}
	}
	r.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.reconcileTotal, m.reconcileDuration, m.podStart, m.restarts, m.imagePulls,
		m.sourceUpdates, m.sourceErrors, m.sourceLastSync, m.manifestErrors,
		m.dockerEvents, m.streamRestarts, m.probeResults,
	)
	m.etcd = newEtcdSeries()
	m.gc = newGCSeries(r)
	m.ProbeRegistry = prometheus.NewRegistry()
	m.probes = newProbeSeries(m.ProbeRegistry)
	return m
}

// ReconcileDone implements controller.Metrics.
func (m *Metrics) ReconcileDone(result string, d time.Duration) {
	m.reconcileTotal.WithLabelValues(result).Inc()
	m.reconcileDuration.Observe(d.Seconds())
}

// PodStarted implements controller.Metrics.
func (m *Metrics) PodStarted(d time.Duration) { m.podStart.Observe(d.Seconds()) }

// ContainerRestarted implements controller.Metrics.
func (m *Metrics) ContainerRestarted() { m.restarts.Inc() }

// ImagePulled implements controller.Metrics.
func (m *Metrics) ImagePulled(result string) { m.imagePulls.WithLabelValues(result).Inc() }

// SourceUpdate implements informer.Metrics.
func (m *Metrics) SourceUpdate(source string, at time.Time) {
	m.sourceUpdates.WithLabelValues(source).Inc()
	m.sourceLastSync.WithLabelValues(source).Set(float64(at.UnixNano()) / 1e9)
}

// SourceError implements informer.Metrics.
func (m *Metrics) SourceError(source string) { m.sourceErrors.WithLabelValues(source).Inc() }

// ManifestErrors implements informer.Metrics.
func (m *Metrics) ManifestErrors(source string, n int) {
	m.manifestErrors.WithLabelValues(source).Add(float64(n))
}

// DockerEvent implements informer.Metrics.
func (m *Metrics) DockerEvent(action string) { m.dockerEvents.WithLabelValues(action).Inc() }

// DockerStreamRestart implements informer.Metrics.
func (m *Metrics) DockerStreamRestart() { m.streamRestarts.Inc() }
