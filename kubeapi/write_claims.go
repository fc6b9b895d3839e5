package kubeapi

import (
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

// dropServedVolumeName removes from m, the normalized JSON of object
// ns/name of kind k written through the push source, the spec.volumeName
// berth serves for a claim of that source (its own engine volume), so that
// a claim read back (get -o yaml) is written as it reads. Any other value
// stays, for validation to refuse. Not a claim: m is unchanged.
func (w *writer) dropServedVolumeName(k writeKind, ns, name string, m map[string]any) {
	if k.kind != model.KindPVC {
		return
	}
	spec, _ := m["spec"].(map[string]any)
	if v, ok := spec["volumeName"].(string); ok && v == runtime.ClaimVolumeName(w.p.Name(), ns, name, w.a.o.Node) {
		delete(spec, "volumeName")
	}
}
