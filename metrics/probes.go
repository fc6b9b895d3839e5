package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/berth-dev/berth/prober"
)

// probeSeries are the kubelet's per-container prober series, served on
// their own registry (ProbeRegistry) as the kubelet's /metrics/probes.
type probeSeries struct {
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newProbeSeries(r *prometheus.Registry) probeSeries {
	s := probeSeries{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "prober", Name: "probe_total",
			Help: "Cumulative number of a liveness, readiness or startup probe for a container by result.",
		}, []string{"probe_type", "result", "container", "pod", "namespace", "pod_uid"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "prober", Name: "probe_duration_seconds",
			Help:    "Duration in seconds for a probe response.",
			Buckets: prometheus.DefBuckets,
		}, []string{"probe_type", "container", "pod", "namespace"}),
	}
	r.MustRegister(s.total, s.duration)
	return s
}

// probeType is the kubelet's probe_type label value ("Liveness", ...).
func probeType(k prober.Kind) string {
	switch k {
	case prober.Liveness:
		return "Liveness"
	case prober.Readiness:
		return "Readiness"
	case prober.Startup:
		return "Startup"
	}
	return string(k)
}

// probeResult is the kubelet's result label value.
func probeResult(r prober.Result) string {
	switch r {
	case prober.Success:
		return "successful"
	case prober.Failure:
		return "failed"
	}
	return "unknown"
}

// ProbeResult implements prober.Metrics: prober_probe_total on
// ProbeRegistry, the duration of successful and unknown runs as the kubelet
// does, and berth_probe_results_total (success and failure only).
func (m *Metrics) ProbeResult(p prober.Probe, r prober.Result, took time.Duration) {
	typ := probeType(p.Kind)
	m.probes.total.WithLabelValues(typ, probeResult(r), p.Container, p.Pod, p.Namespace, p.PodUID).Inc()
	if r != prober.Failure {
		m.probes.duration.WithLabelValues(typ, p.Container, p.Pod, p.Namespace).Observe(took.Seconds())
	}
	switch r {
	case prober.Success:
		m.probeResults.WithLabelValues(string(p.Kind), "success").Inc()
	case prober.Failure:
		m.probeResults.WithLabelValues(string(p.Kind), "failure").Inc()
	}
}

// ProbeStopped implements prober.Metrics: p's prober_ series are deleted.
func (m *Metrics) ProbeStopped(p prober.Probe) {
	typ := probeType(p.Kind)
	for _, r := range []prober.Result{prober.Success, prober.Failure, prober.Unknown} {
		m.probes.total.DeleteLabelValues(typ, probeResult(r), p.Container, p.Pod, p.Namespace, p.PodUID)
	}
	m.probes.duration.DeleteLabelValues(typ, p.Container, p.Pod, p.Namespace)
}
