package kubeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// Patch types of the Content-Type of a PATCH.
const (
	patchJSON      = "application/json-patch+json"
	patchMerge     = "application/merge-patch+json"
	patchStrategic = "application/strategic-merge-patch+json"
	patchApplyYAML = "application/apply-patch+yaml"
	patchApplyCBOR = "application/apply-patch+cbor"
)

// readPatch reads a PATCH's body and type; server-side apply is a 415
// saying what to use instead.
func readPatch(r *http.Request) (typ string, patch []byte, err error) {
	typ, _, _ = mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch typ {
	case patchJSON, patchMerge, patchStrategic:
	case patchApplyYAML, patchApplyCBOR:
		return "", nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure,
			Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
			Message: "server-side apply is not served by berth: use client-side `kubectl apply` (without --server-side), `kubectl patch` or `kubectl replace`"}}
	default:
		return "", nil, unsupportedMedia(typ, patchJSON+", "+patchMerge+", "+patchStrategic)
	}
	if patch, err = io.ReadAll(r.Body); err != nil {
		return "", nil, bodyError(err)
	}
	return typ, patch, nil
}

// applyPatch applies patch of typ to cur, the JSON of an object of kind k,
// and returns the patched JSON; a patch that does not apply is a 422, one
// that cannot be parsed a 400, as in the apiserver. A patch over its limits
// (write_patch_limits.go) is refused before it costs more than they allow,
// and a JSON patch of a Secret may not read its values (checkSecretPatch).
func (w *writer) applyPatch(ctx context.Context, k writeKind, name, typ string, cur, patch []byte) ([]byte, error) {
	if typ == patchJSON {
		if err := checkJSONPatch(k, name, patch); err != nil {
			return nil, err
		}
		ops, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, patchFailed(k, name, fmt.Errorf("the patch is not a JSON array of operations: %v", err))
		}
		if len(ops) > maxJSONPatchOps {
			return nil, patchFailed(k, name, fmt.Errorf("the patch has %d operations, more than %d", len(ops), maxJSONPatchOps))
		}
		if k.kind == "Secret" {
			if err := checkSecretPatch(k, name, ops); err != nil {
				return nil, err
			}
		}
		return w.applyJSONPatch(ctx, k, name, ops, cur)
	}
	if err := checkMergePatch(k, name, typ, patch, cur); err != nil {
		return nil, err
	}
	var decoded any
	if err := json.Unmarshal(patch, &decoded); err != nil {
		if typ == patchStrategic {
			return nil, badRequest("the strategic merge patch is not a JSON object: " + err.Error())
		}
		return nil, badRequest("the merge patch is not JSON")
	}
	if _, ok := decoded.(map[string]any); !ok && decoded != nil && typ == patchStrategic {
		return nil, badRequest("the strategic merge patch is not a JSON object")
	}
	var out []byte
	var err error
	if typ == patchStrategic {
		out, err = strategicpatch.StrategicMergePatch(cur, patch, k.zero())
	} else {
		out, err = jsonpatch.MergePatch(cur, patch)
	}
	if err != nil {
		return nil, patchFailed(k, name, err)
	}
	return out, checkPatchedSize(k, name, out)
}

func patchFailed(k writeKind, name string, err error) error {
	return statusErr(http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, k, name,
		fmt.Sprintf("the patch of %s %q does not apply: %v", k.resource, name, err))
}
