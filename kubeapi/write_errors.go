package kubeapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/berth-dev/berth/manifest"
)

// statusErr is a Kubernetes Status error of code and reason about the
// kind's object name.
func statusErr(code int, reason metav1.StatusReason, k writeKind, name, msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: int32(code), Reason: reason, Message: msg,
		Details: &metav1.StatusDetails{Name: name, Kind: k.resource},
	}}
}

func badRequest(msg string) error { return apierrors.NewBadRequest(msg) }

// conflict is the apiserver's answer to a stale precondition.
func conflict(k writeKind, name, why string) error {
	return statusErr(http.StatusConflict, metav1.StatusReasonConflict, k, name,
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", k.resource, name, why))
}

// pushStatus turns a refusal of the push source into a Status: a 422 into
// Invalid with one cause per field, as kubectl prints them ("The Pod "x"
// is invalid: spec.containers[0].image: Required value"); a 403 (over the
// source's quota) into Forbidden, as a ResourceQuota refuses
// ("configmaps "x" is forbidden: exceeded quota: push, ...").
func pushStatus(k writeKind, name string, err error) error {
	var coded interface{ HTTPStatus() int }
	if !errors.As(err, &coded) {
		return err
	}
	var withErrs interface {
		ManifestErrors() []manifest.ManifestError
	}
	code := coded.HTTPStatus()
	switch code {
	case http.StatusUnprocessableEntity:
		if errors.As(err, &withErrs) && len(withErrs.ManifestErrors()) > 0 {
			return invalid(k, name, withErrs.ManifestErrors())
		}
		return statusErr(code, metav1.StatusReasonInvalid, k, name, err.Error())
	case http.StatusNotFound:
		return notFound("", k.resource, name)
	case http.StatusConflict:
		if strings.Contains(err.Error(), "already exists") {
			return apierrors.NewAlreadyExists(groupResource(k), name)
		}
		return conflict(k, name, err.Error())
	case http.StatusBadRequest:
		return badRequest(err.Error())
	case http.StatusForbidden:
		return apierrors.NewForbidden(groupResource(k), name, errors.New(err.Error()))
	case http.StatusRequestEntityTooLarge:
		return statusErr(code, metav1.StatusReasonRequestEntityTooLarge, k, name, err.Error())
	}
	return apierrors.NewInternalError(err)
}

// invalid is the 422 of manifest errors: causes name the fields.
func invalid(k writeKind, name string, errs []manifest.ManifestError) error {
	causes := make([]metav1.StatusCause, 0, len(errs))
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		msg := e.Err
		if e.Field != "" {
			msg = e.Field + ": " + e.Err
		}
		if e.PodKey == "" {
			msg = e.Error() // not tied to the object: keep the origin
		}
		msgs = append(msgs, msg)
		causes = append(causes, metav1.StatusCause{Type: causeType(e.Err), Message: e.Err, Field: e.Field})
	}
	text := msgs[0]
	if len(msgs) > 1 {
		text = "[" + strings.Join(msgs, ", ") + "]"
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
		Message: fmt.Sprintf("%s %q is invalid: %s", k.kind, name, text),
		Details: &metav1.StatusDetails{Name: name, Kind: k.kind, Causes: causes},
	}}
}

// causeType recovers the field.ErrorType from an error body's prefix.
func causeType(body string) metav1.CauseType {
	for _, t := range []field.ErrorType{field.ErrorTypeRequired, field.ErrorTypeInvalid, field.ErrorTypeNotSupported,
		field.ErrorTypeForbidden, field.ErrorTypeDuplicate, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeNotFound} {
		if strings.HasPrefix(body, t.String()) {
			return metav1.CauseType(t)
		}
	}
	return metav1.CauseTypeFieldValueInvalid
}
