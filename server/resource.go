package server

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/berth-dev/berth/stats"
)

// The kubelet's resource metrics (pkg/kubelet/metrics/collectors/
// resource_metrics.go), with its names, help texts and units, as
// metrics-server reads them from /metrics/resource.
var (
	nodeCPUUsageDesc = prometheus.NewDesc("node_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the node in core-seconds", nil, nil)
	nodeMemoryUsageDesc = prometheus.NewDesc("node_memory_working_set_bytes",
		"Current working set of the node in bytes", nil, nil)
	containerCPUUsageDesc = prometheus.NewDesc("container_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the container in core-seconds", []string{"container", "pod", "namespace"}, nil)
	containerMemoryUsageDesc = prometheus.NewDesc("container_memory_working_set_bytes",
		"Current working set of the container in bytes", []string{"container", "pod", "namespace"}, nil)
	containerStartTimeDesc = prometheus.NewDesc("container_start_time_seconds",
		"Start time of the container since unix epoch in seconds", []string{"container", "pod", "namespace"}, nil)
	podCPUUsageDesc = prometheus.NewDesc("pod_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the pod in core-seconds", []string{"pod", "namespace"}, nil)
	podMemoryUsageDesc = prometheus.NewDesc("pod_memory_working_set_bytes",
		"Current working set of the pod in bytes", []string{"pod", "namespace"}, nil)
	scrapeErrorDesc = prometheus.NewDesc("scrape_error",
		"1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
	resourceScrapeErrorDesc = prometheus.NewDesc("resource_scrape_error",
		"1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
)

// resourceTimeout bounds one Summary of a scrape.
const resourceTimeout = 10 * time.Second

// RegisterResource serves GET /metrics/resource (authenticated): the
// kubelet's resource metrics from p's Summary, each sample stamped with its
// stats' time. When p has no stats the answer is still 200, with only
// scrape_error and resource_scrape_error at 1, as the kubelet answers.
func RegisterResource(s *Server, p stats.Provider) {
	if p == nil {
		p = stats.Unavailable{Reason: "container stats are not configured"}
	}
	s.Handle("GET /metrics/resource", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), resourceTimeout)
		defer cancel()
		reg := prometheus.NewRegistry()
		reg.MustRegister(NewResourceCollector(ctx, p))
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
	}))
}

// NewResourceCollector collects the resource metrics from p.Summary(ctx)
// on each Collect; a failed Summary is reported as scrape_error 1 with no
// other sample (the agent already warned at startup that stats are off).
// ctx bounds every Collect: build one collector per scrape.
func NewResourceCollector(ctx context.Context, p stats.Provider) prometheus.Collector {
	return &resourceCollector{ctx: ctx, p: p}
}

type resourceCollector struct {
	ctx context.Context
	p   stats.Provider
}

func (c *resourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{nodeCPUUsageDesc, nodeMemoryUsageDesc, containerStartTimeDesc,
		containerCPUUsageDesc, containerMemoryUsageDesc, podCPUUsageDesc, podMemoryUsageDesc,
		scrapeErrorDesc, resourceScrapeErrorDesc} {
		ch <- d
	}
}

func (c *resourceCollector) Collect(ch chan<- prometheus.Metric) {
	sum, err := c.p.Summary(c.ctx)
	failed := 0.0
	if err != nil {
		failed = 1
	} else {
		collectNode(ch, sum.Node)
		for _, pod := range sum.Pods {
			ref := pod.PodRef
			for _, ctr := range pod.Containers {
				if ctr.StartTime.Unix() > 0 {
					ch <- prometheus.MustNewConstMetric(containerStartTimeDesc, prometheus.GaugeValue,
						float64(ctr.StartTime.UnixNano())/float64(time.Second), ctr.Name, ref.Name, ref.Namespace)
				}
				collectCPU(ch, containerCPUUsageDesc, ctr.CPU, ctr.Name, ref.Name, ref.Namespace)
				collectMemory(ch, containerMemoryUsageDesc, ctr.Memory, ctr.Name, ref.Name, ref.Namespace)
			}
			collectCPU(ch, podCPUUsageDesc, pod.CPU, ref.Name, ref.Namespace)
			collectMemory(ch, podMemoryUsageDesc, pod.Memory, ref.Name, ref.Namespace)
		}
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, failed)
	ch <- prometheus.MustNewConstMetric(resourceScrapeErrorDesc, prometheus.GaugeValue, failed)
}

func collectNode(ch chan<- prometheus.Metric, n stats.NodeStats) {
	collectCPU(ch, nodeCPUUsageDesc, n.CPU)
	collectMemory(ch, nodeMemoryUsageDesc, n.Memory)
}

// collectCPU sends the cumulative CPU of s in core-seconds at s's time;
// nothing when unknown.
func collectCPU(ch chan<- prometheus.Metric, d *prometheus.Desc, s *stats.CPUStats, labels ...string) {
	if s == nil || s.UsageCoreNanoSeconds == nil {
		return
	}
	ch <- prometheus.NewMetricWithTimestamp(s.Time.Time, prometheus.MustNewConstMetric(d, prometheus.CounterValue,
		float64(*s.UsageCoreNanoSeconds)/float64(time.Second), labels...))
}

// collectMemory sends the working set of s at s's time; nothing when
// unknown.
func collectMemory(ch chan<- prometheus.Metric, d *prometheus.Desc, s *stats.MemoryStats, labels ...string) {
	if s == nil || s.WorkingSetBytes == nil {
		return
	}
	ch <- prometheus.NewMetricWithTimestamp(s.Time.Time, prometheus.MustNewConstMetric(d, prometheus.GaugeValue,
		float64(*s.WorkingSetBytes), labels...))
}
