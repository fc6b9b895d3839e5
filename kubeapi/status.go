package kubeapi

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/berth-dev/berth/kubeapi/apierr"
)

// WriteError answers err as a Kubernetes Status object (apierr.WriteError).
func WriteError(w http.ResponseWriter, err error) { apierr.WriteError(w, err) }

// WriteStatus answers code with reason and message as a Status
// (apierr.WriteStatus).
func WriteStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	apierr.WriteStatus(w, code, reason, msg)
}

// notFound is the error of a missing object: `pods "x" not found`.
func notFound(group, resource, name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Group: group, Resource: resource}, name)
}

// notFoundHandler answers paths under /api and /apis that are not served.
// Its details are empty but present, as the apiserver's: kubectl tells an
// unserved subresource (debug's ephemeralcontainers) from a missing object
// by them, and dereferences them.
func notFoundHandler(w http.ResponseWriter, r *http.Request) {
	WriteError(w, &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound,
		Message: fmt.Sprintf("the server could not find the requested resource (%s %s)", r.Method, r.URL.Path),
		Details: &metav1.StatusDetails{},
	}})
}
