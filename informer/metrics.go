// Package informer keeps the store current: desired pods from the sources,
// actual containers from the runtime's list and event stream.
package informer

import "time"

// Metrics receives the informers' measurements; metrics/ implements it.
type Metrics interface {
	SourceUpdate(source string, at time.Time)
	SourceError(source string)
	ManifestErrors(source string, n int)
	DockerEvent(action string)
	DockerStreamRestart()
}

type noMetrics struct{}

func (noMetrics) SourceUpdate(string, time.Time) {}
func (noMetrics) SourceError(string)             {}
func (noMetrics) ManifestErrors(string, int)     {}
func (noMetrics) DockerEvent(string)             {}
func (noMetrics) DockerStreamRestart()           {}
