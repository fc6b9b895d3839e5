package agent

import (
	"github.com/berth-dev/berth/metrics"
	"github.com/berth-dev/berth/server"
	"github.com/berth-dev/berth/stats"
)

// API is the handler Run serves, every route mounted, for tests and tools
// that list what the agent answers (server.Patterns); serving it beside Run
// is misuse.
func (a *Agent) API() *server.Server { return a.api }

// Metrics holds the collectors behind /metrics and /metrics/probes.
func (a *Agent) Metrics() *metrics.Metrics { return a.metrics }

// Stats is the container-stats provider behind /stats/summary, /spec and
// /metrics/cadvisor (stats.Unavailable when cAdvisor is off or failed).
func (a *Agent) Stats() stats.Provider { return a.stats }

// Close releases what New opened, for an agent that never runs (Run closes
// its own on the way out).
func (a *Agent) Close() { a.close() }
