// Package stats provides berth's node and container statistics: the
// kubelet-style /stats/summary, the machine spec (/spec) and cAdvisor's
// Prometheus metrics (/metrics/cadvisor). The real implementation embeds
// cAdvisor (cadvisor.go); Unavailable stands in when cAdvisor cannot run
// (no cgroups, no Docker, disabled), so berth keeps running without stats.
package stats

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Provider answers the stats endpoints.
type Provider interface {
	// Summary is the kubelet-style summary of the node and its pods.
	Summary(ctx context.Context) (*Summary, error)
	// MachineInfo is cAdvisor's info/v1 MachineInfo (*v1.MachineInfo).
	MachineInfo(ctx context.Context) (any, error)
	// Collector is cAdvisor's Prometheus collector (container_* and
	// machine_* metrics), meant for its own registry; nil when unavailable.
	Collector() prometheus.Collector
	// Start begins collection and returns; collection stops when ctx ends.
	Start(ctx context.Context) error
}

// ErrUnavailable is wrapped by every error that means "no stats on this
// node" (as opposed to a failed request); the API answers 503 for it.
var ErrUnavailable = errors.New("container stats unavailable")

// Unavailable is the Provider used when cAdvisor cannot run; every method
// fails with ErrUnavailable and Reason.
type Unavailable struct {
	Reason string
}

var _ Provider = Unavailable{}

// Err is the error every method returns: ErrUnavailable with the reason.
func (u Unavailable) Err() error {
	if u.Reason == "" {
		return ErrUnavailable
	}
	return fmt.Errorf("%w: %s", ErrUnavailable, u.Reason)
}

// Summary fails with the reason.
func (u Unavailable) Summary(context.Context) (*Summary, error) { return nil, u.Err() }

// MachineInfo fails with the reason.
func (u Unavailable) MachineInfo(context.Context) (any, error) { return nil, u.Err() }

// Collector is nil: there are no cAdvisor metrics.
func (u Unavailable) Collector() prometheus.Collector { return nil }

// Start does nothing and succeeds: being unavailable is the steady state.
func (u Unavailable) Start(context.Context) error { return nil }

// Open builds and starts the cAdvisor provider. On failure it returns an
// Unavailable provider carrying the reason together with the error (for a
// warning log), so the caller can always use the returned Provider:
//
//	p, err := stats.Open(ctx, opts)
//	if err != nil { log.Warn("container stats disabled", "err", err) }
//	server.RegisterStats(srv, p)
func Open(ctx context.Context, o Options) (Provider, error) {
	c, err := NewCadvisor(o)
	if err != nil {
		return Unavailable{Reason: err.Error()}, err
	}
	if err := c.Start(ctx); err != nil {
		return Unavailable{Reason: err.Error()}, err
	}
	return c, nil
}
