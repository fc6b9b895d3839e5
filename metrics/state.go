package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

// RegisterState adds gauges computed from the store at scrape time:
// berth_pods{phase} and berth_containers{state}.
func (m *Metrics) RegisterState(st *store.Store) {
	m.Registry.MustRegister(&stateCollector{store: st})
}

type stateCollector struct{ store *store.Store }

var (
	podsDesc       = prometheus.NewDesc("berth_pods", "Desired pods, by phase.", []string{"phase"}, nil)
	containersDesc = prometheus.NewDesc("berth_containers", "Managed containers, by Docker state.", []string{"state"}, nil)
)

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- podsDesc
	ch <- containersDesc
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	phases := map[string]float64{"Pending": 0, "Running": 0, "Succeeded": 0, "Failed": 0}
	pods, _ := c.store.Pods(nil)
	for _, p := range pods {
		ph := string(p.Status.Phase)
		if ph == "" {
			ph = "Pending"
		}
		phases[ph]++
	}
	for ph, n := range phases {
		ch <- prometheus.MustNewConstMetric(podsDesc, prometheus.GaugeValue, n, ph)
	}
	states := map[string]float64{model.StateCreated: 0, model.StateRunning: 0, model.StateExited: 0}
	ctrs, _ := c.store.Containers(nil)
	for _, ct := range ctrs {
		states[ct.State]++
	}
	for s, n := range states {
		ch <- prometheus.MustNewConstMetric(containersDesc, prometheus.GaugeValue, n, s)
	}
}
