package kubeapi

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-dev/berth/sources"
)

// Pusher is the push source as the write routes use it; every create,
// replace, patch and delete goes through it, under its decoding,
// validation and Pod Security level (sources.PushSource implements it).
// kind is "Pod", "ConfigMap", "Secret" or "PersistentVolumeClaim". Refusals carry their HTTP status
// (HTTPStatus() int) and, for a 422, the manifest's field errors
// (ManifestErrors() []manifest.ManifestError).
type Pusher interface {
	// Name is the source's name: the owner of what the API may change.
	Name() string
	// Manifest returns the persisted manifest of ns/name (404 if none).
	Manifest(kind, ns, name string) ([]byte, error)
	// Put validates data as exactly the object ns/name and persists it
	// as o says (sources.PutOptions), and returns once the store holds it
	// (or would, for a dry run): the decoded object, whether it was
	// created, and admission's refusal of it.
	Put(kind, ns, name string, data []byte, o sources.PutOptions) (sources.PutResult, error)
	// Delete removes ns/name (404 if none); dryRun only checks.
	Delete(kind, ns, name string, dryRun bool) error
}

// writeKind is one kind the write routes change.
type writeKind struct {
	resource, kind string
	zero           func() runtime.Object
}

// writeKinds are the registered kinds the push source persists
// (registry.Kind.Writable), in registration order.
func (a *API) writeKinds() []writeKind {
	var out []writeKind
	for _, k := range a.reg.Kinds() {
		if k.Writable {
			zero := k.Zero
			out = append(out, writeKind{resource: k.Name, kind: k.Kind, zero: func() runtime.Object { return zero() }})
		}
	}
	return out
}

// writer serves the write routes of one API through p.
type writer struct {
	a *API
	p Pusher
}

// AddWrites adds create (POST), replace (PUT), patch (PATCH) and delete
// (DELETE) of the writable kinds (registry.Kind.Writable), all through p: only p's
// objects may change; another source's answer 403 naming it. p becomes
// Options.PushSource when that is unset.
func (a *API) AddWrites(p Pusher) {
	if a.o.PushSource == "" {
		a.o.PushSource = p.Name()
		a.ro.PushSource = p.Name()
	}
	w := &writer{a: a, p: p}
	for _, k := range a.writeKinds() {
		coll := "/api/v1/namespaces/{ns}/" + k.resource
		a.handle("POST "+coll, AccessWrite, w.create(k))
		a.handle("PUT "+coll+"/{name}", AccessWrite, w.replace(k))
		a.handle("PATCH "+coll+"/{name}", AccessWrite, w.patch(k))
		a.handle("DELETE "+coll+"/{name}", AccessWrite, w.remove(k))
	}
}
