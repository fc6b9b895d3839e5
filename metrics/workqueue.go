package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// WorkqueueProvider returns a client-go workqueue MetricsProvider that
// registers the standard workqueue_* series (labelled name=<queue>) on m.
func (m *Metrics) WorkqueueProvider() workqueue.MetricsProvider {
	p := &queueProvider{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "workqueue_depth", Help: "Current depth of workqueue.",
		}, []string{"name"}),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workqueue_adds_total", Help: "Total number of adds handled by workqueue.",
		}, []string{"name"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "workqueue_queue_duration_seconds", Help: "How long in seconds an item stays in workqueue before being requested.",
			Buckets: prometheus.ExponentialBuckets(10e-9, 10, 10),
		}, []string{"name"}),
		work: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "workqueue_work_duration_seconds", Help: "How long in seconds processing an item from workqueue takes.",
			Buckets: prometheus.ExponentialBuckets(10e-9, 10, 10),
		}, []string{"name"}),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "workqueue_unfinished_work_seconds", Help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration.",
		}, []string{"name"}),
		longest: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "workqueue_longest_running_processor_seconds", Help: "How many seconds has the longest running processor for workqueue been running.",
		}, []string{"name"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workqueue_retries_total", Help: "Total number of retries handled by workqueue.",
		}, []string{"name"}),
	}
	m.Registry.MustRegister(p.depth, p.adds, p.latency, p.work, p.unfinished, p.longest, p.retries)
	return p
}

type queueProvider struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, work              *prometheus.HistogramVec
}

func (p *queueProvider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return p.depth.WithLabelValues(name)
}
func (p *queueProvider) NewAddsMetric(name string) workqueue.CounterMetric {
	return p.adds.WithLabelValues(name)
}
func (p *queueProvider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return p.latency.WithLabelValues(name)
}
func (p *queueProvider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return p.work.WithLabelValues(name)
}
func (p *queueProvider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.unfinished.WithLabelValues(name)
}
func (p *queueProvider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.longest.WithLabelValues(name)
}
func (p *queueProvider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return p.retries.WithLabelValues(name)
}
