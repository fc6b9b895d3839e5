package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// RegisterProbes serves GET /metrics/probes (authenticated): the kubelet's
// per-container prober_ series, gathered from reg (metrics.Metrics'
// ProbeRegistry). A nil reg serves an empty exposition.
func RegisterProbes(s *Server, reg prometheus.Gatherer) {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	s.Handle("GET /metrics/probes", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
}
