package kubeapi

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/kubeapi/registry"
	"github.com/berth-dev/berth/model"
)

// stored is the store's record of an object: its owner and UID.
type stored struct {
	source, origin string
	uid            types.UID
}

// lookup returns the store's record of the kind's ns/name, or nil.
func (w *writer) lookup(k writeKind, ns, name string) (*stored, error) {
	key := ns + "/" + name
	if k.kind == "Pod" {
		p, err := w.a.o.Store.Pod(nil, key)
		if err != nil || p == nil {
			return nil, err
		}
		return &stored{source: p.Source, origin: p.Origin, uid: p.Spec.UID}, nil
	}
	o, err := w.a.o.Store.Object(nil, k.kind, key)
	if err != nil || o == nil {
		return nil, err
	}
	return &stored{source: o.Source, origin: o.Origin, uid: registry.ObjectUID(o)}, nil
}

// writable refuses, with a 403 naming the owner, a change of an object
// another source declares; a token that may not see it learns only that
// another source owns it.
func (w *writer) writable(r *http.Request, k writeKind, name string, s *stored) error {
	if s == nil || s.source == w.p.Name() {
		return nil
	}
	where := "another source"
	if w.a.o.Visible(r, &model.Pod{Source: s.source}) {
		where = fmt.Sprintf("source %s (%s)", s.source, s.origin)
	}
	return statusErr(http.StatusForbidden, metav1.StatusReasonForbidden, k, name,
		fmt.Sprintf("%s %q is read-only: it comes from %s; edit it there", k.resource, name, where))
}

// alreadyExists is the 409 of a create whose key another source holds.
func (w *writer) alreadyExists(r *http.Request, k writeKind, name string, s *stored) error {
	err := apierrors.NewAlreadyExists(groupResource(k), name)
	if w.a.o.Visible(r, &model.Pod{Source: s.source}) {
		err.ErrStatus.Message += fmt.Sprintf(" (read-only, from source %s: %s)", s.source, s.origin)
	}
	return err
}

func groupResource(k writeKind) schema.GroupResource {
	return schema.GroupResource{Resource: k.resource}
}
