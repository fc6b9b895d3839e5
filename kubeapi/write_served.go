package kubeapi

import (
	"net/http"

	"github.com/berth-dev/berth/kubeapi/registry"
)

// served returns the push source's ns/name of k as the API serves it now
// (its resourceVersion set), or nil when the store holds none of the push
// source's. The push source
// applies each write before it returns, so after a write this is the
// stored result: no wait, no second request.
func (w *writer) served(r *http.Request, k writeKind, ns, name string) registry.Object {
	kind := w.a.reg.Lookup(k.resource, "v1")
	if kind == nil {
		return nil
	}
	e, err := kind.Versions.Get(r.Context(), ns+"/"+name)
	if err != nil || e == nil || e.Source != w.p.Name() {
		return nil // none, or another source's (a pod still terminating)
	}
	return e.Obj
}
