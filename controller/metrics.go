package controller

import "time"

// Reconcile outcomes, used both for the queue action and the metric label.
const (
	ResultSuccess      = "success"
	ResultError        = "error"
	ResultRequeue      = "requeue"
	ResultRequeueAfter = "requeue_after"
	// ResultPanic: Reconcile panicked; the key is retried rate-limited.
	ResultPanic = "panic"
)

// Metrics receives the controller's measurements. The controller knows no
// metrics library; metrics/ implements this with Prometheus.
type Metrics interface {
	ReconcileDone(result string, d time.Duration)
	PodStarted(d time.Duration)
	ContainerRestarted()
	ImagePulled(result string)
}

type noMetrics struct{}

func (noMetrics) ReconcileDone(string, time.Duration) {}
func (noMetrics) PodStarted(time.Duration)            {}
func (noMetrics) ContainerRestarted()                 {}
func (noMetrics) ImagePulled(string)                  {}
