// Package sources turns manifests from files, HTTP, etcd and pushes into
// validated desired pods, and reports them as updates tagged with the source.
package sources

import (
	"context"

	v1 "k8s.io/api/core/v1"
)

// Desired is one validated, defaulted pod and where it came from.
type Desired struct {
	Pod    *v1.Pod
	Origin string // file path, URL or etcd key
}

// ManifestError is one rejected manifest or pod. When PodKey is empty the
// whole origin failed to decode, and the pods it held before are kept.
type ManifestError struct {
	Origin string
	PodKey string // "namespace/name" when known
	Field  string // JSON path of the bad field, e.g. spec.containers[0].image
	Err    string
}

func (e ManifestError) Error() string {
	s := e.Origin
	if e.PodKey != "" {
		s += ": " + e.PodKey
	}
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Err
}

// Update is a complete snapshot of one source: all pods it declares now, plus
// the manifests it could not accept. Pods of the source not in Pods are to be
// deleted, except those named by (or from an origin named by) an error.
type Update struct {
	Source string
	Pods   []Desired
	Errors []ManifestError
	// Warnings are source-level conditions shown in the source's status
	// that do not keep any pod (e.g. "path does not exist").
	Warnings []string
	// Err, when set, means the source could not be read this time (HTTP
	// 500, timeout, etcd down): Pods and Errors are ignored, the last good
	// set stays, and the error is counted and shown. It does not mark the
	// source synced.
	Err error
}

// Source produces updates until ctx ends. Run sends on out with a select on
// ctx.Done(), and returns nil when ctx ends.
type Source interface {
	Name() string
	Run(ctx context.Context, out chan<- Update) error
}
