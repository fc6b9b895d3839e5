// Package sources reads manifests from HTTP, etcd and pushes, and reports
// the pods they declare (decoded and validated by package manifest) as
// updates tagged with the source. It holds the transports only, and what
// every transport shares: the Update, the options and quota, reading and
// listing manifest files (LoadAll, for berth validate and apply). The file
// source, a watched path, is package sources/filesource.
package sources

import (
	"context"

	"github.com/berth-dev/berth/manifest"
)

// Update is a complete snapshot of one source: all pods it declares now, plus
// the manifests it could not accept. Pods of the source not in Pods are to be
// deleted, except those named by (or from an origin named by) an error.
// An Update, its slices and the pods and objects in them are never mutated
// once sent, by the source or the consumer (the informer keeps the last
// one to compare the next with): a source may send an unchanged pod again
// as the same object (the etcd source does), which the consumer may take
// as unchanged.
type Update struct {
	Source string
	Pods   []manifest.Desired
	// Objects are the ConfigMaps and Secrets the source declares now;
	// like Pods, a complete set.
	Objects []manifest.Object
	Errors  []manifest.ManifestError
	// Warnings are source-level conditions shown in the source's status
	// that do not keep any pod (e.g. "path does not exist").
	Warnings []string
	// Err, when set, means the source could not be read this time (HTTP
	// 500, timeout, etcd down): Pods and Errors are ignored, the last good
	// set stays, and the error is counted and shown. It does not mark the
	// source synced.
	Err error
}

// Applied is what the consumer decided of one update: the refusals by pod
// key ("namespace/name") and by object ref (model.ObjectRef).
type Applied struct {
	Refused map[string]string
}

// Applier applies an update synchronously (the source informer's
// ApplyResult): a source holding one may apply its updates itself, in
// order, and learn what was refused.
type Applier func(Update) (Applied, error)

// Source produces updates until ctx ends. Run sends on out with a select on
// ctx.Done(), and returns nil when ctx ends.
type Source interface {
	Name() string
	Run(ctx context.Context, out chan<- Update) error
}

// add appends what one origin declared, and the warnings of the documents
// it skipped.
func (u *Update) add(d manifest.Decoded) {
	u.Pods = append(u.Pods, d.Pods...)
	u.Objects = append(u.Objects, d.Objects...)
	u.Errors = append(u.Errors, d.Errors...)
	u.Warnings = append(u.Warnings, d.Warnings...)
}
