// Package apierr renders errors as the Kubernetes API's Status objects. It
// is the one place kubeapi and its parts (streams) write a refusal, so
// every route answers in the same shape.
package apierr

import (
	"encoding/json"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WriteError answers err as a Kubernetes Status object, which kubectl
// prints as "Error from server (Reason): message". Errors that are not
// apierrors become 500 InternalError.
func WriteError(w http.ResponseWriter, err error) {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		st = apierrors.NewInternalError(err)
	}
	s := st.Status()
	s.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	if s.Code == 0 {
		s.Code = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(int(s.Code))
	_ = json.NewEncoder(w).Encode(s)
}

// WriteStatus answers code with reason and message as a Status (for the
// server's 401 and 403 on Kubernetes routes).
func WriteStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	WriteError(w, &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: int32(code), Reason: reason, Message: msg,
	}})
}
