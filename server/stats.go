package server

import (
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/berth-dev/berth/stats"
)

// RegisterStats adds the container-stats endpoints, all authenticated:
// GET /stats/summary (kubelet-style JSON summary), GET /spec (cAdvisor's
// machine info) and GET /metrics/cadvisor (cAdvisor's metrics, on their own
// registry). When p has no stats (stats.Unavailable, or p nil) they answer
// 503 with the reason.
func RegisterStats(s *Server, p stats.Provider) {
	if p == nil {
		p = stats.Unavailable{Reason: "container stats are not configured"}
	}
	s.Handle("GET /stats/summary", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sum, err := p.Summary(r.Context())
		if err != nil {
			statsError(w, err)
			return
		}
		writeJSON(w, sum)
	}))
	s.Handle("GET /spec", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mi, err := p.MachineInfo(r.Context())
		if err != nil {
			statsError(w, err)
			return
		}
		writeJSON(w, mi)
	}))
	s.Handle("GET /metrics/cadvisor", cadvisorMetricsHandler(p))
}

// statsError answers 503 when the node has no stats, 500 for other failures.
func statsError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, stats.ErrUnavailable) {
		code = http.StatusServiceUnavailable
	}
	http.Error(w, err.Error(), code)
}

func cadvisorMetricsHandler(p stats.Provider) http.Handler {
	reason := stats.ErrUnavailable.Error() + ": no cAdvisor metrics collector"
	if c := p.Collector(); c != nil {
		reg := prometheus.NewRegistry()
		err := reg.Register(c)
		if err == nil {
			return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
		}
		reason = stats.ErrUnavailable.Error() + ": cAdvisor metrics collector: " + err.Error()
	} else if u, ok := p.(stats.Unavailable); ok {
		reason = u.Err().Error()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, reason, http.StatusServiceUnavailable)
	})
}
