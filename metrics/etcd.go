package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// etcdSeries are the etcd client's series: request latency and errors by
// operation (every client of the agent), status writes and lease renewals.
type etcdSeries struct {
	requests      *prometheus.HistogramVec
	errors        *prometheus.CounterVec
	statusWrites  prometheus.Counter
	leaseRenewals *prometheus.CounterVec
}

func newEtcdSeries() etcdSeries {
	s := etcdSeries{
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "berth_etcd_request_duration_seconds", Help: "etcd requests (and stream openings: watch, lease keep-alive) by operation.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"operation"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "berth_etcd_request_errors_total", Help: "Failed etcd requests by operation (cancellations by berth itself are not counted).",
		}, []string{"operation"}),
		statusWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "berth_etcd_status_writes_total", Help: "Pod status keys put or deleted in etcd (rate() is writes per second).",
		}),
		leaseRenewals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "berth_etcd_lease_renewals_total", Help: "Renewals of the node lease, by result.",
		}, []string{"result"}),
	}
	for _, op := range []string{"range", "txn", "put", "deleterange", "leasegrant", "leasekeepalive", "leaserevoke", "watch"} {
		s.requests.WithLabelValues(op)
		s.errors.WithLabelValues(op)
	}
	s.leaseRenewals.WithLabelValues("success")
	s.leaseRenewals.WithLabelValues("failure")
	return s
}

// RegisterEtcd exports the berth_etcd_* series; an agent with etcd
// configured calls it once, so a node without etcd shows none of them
// (they would stay at zero). The observers count either way.
func (m *Metrics) RegisterEtcd() {
	m.Registry.MustRegister(m.etcd.requests, m.etcd.errors, m.etcd.statusWrites, m.etcd.leaseRenewals)
}

// EtcdRequest implements etcdclient.Observer.
func (m *Metrics) EtcdRequest(operation string, d time.Duration, err error) {
	m.etcd.requests.WithLabelValues(operation).Observe(d.Seconds())
	if err != nil && !errors.Is(err, context.Canceled) && status.Code(err) != codes.Canceled {
		m.etcd.errors.WithLabelValues(operation).Inc()
	}
}

// StatusWrites implements cluster.Metrics.
func (m *Metrics) StatusWrites(n int) { m.etcd.statusWrites.Add(float64(n)) }

// LeaseRenewed implements cluster.Metrics.
func (m *Metrics) LeaseRenewed(ok bool) {
	if ok {
		m.etcd.leaseRenewals.WithLabelValues("success").Inc()
	} else {
		m.etcd.leaseRenewals.WithLabelValues("failure").Inc()
	}
}
