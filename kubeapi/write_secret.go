package kubeapi

import (
	"fmt"
	"slices"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	v1 "k8s.io/api/core/v1"
)

// withheldFields are where a stored Secret holds the values GET withholds
// (as JSON pointer segments): data, stringData, and kubectl apply's copy
// of both in the last-applied annotation.
var withheldFields = [][]string{{"data"}, {"stringData"}, {"metadata", "annotations", v1.LastAppliedConfigAnnotation}}

// checkSecretPatch refuses (422) a JSON patch of the Secret name with an
// operation that reads what GET withholds: copy or move from, or test of,
// a place at, in or above a withheld field. Those would put a value where
// GET serves it, or test a guess of it. Operations that only write (add,
// replace, remove, and moves and copies among other fields) stay.
func checkSecretPatch(k writeKind, name string, ops jsonpatch.Patch) error {
	for i, op := range ops {
		var ptr string
		var err error
		switch op.Kind() {
		case "copy", "move":
			ptr, err = op.From()
		case "test":
			ptr, err = op.Path()
		default:
			continue
		}
		if err != nil {
			continue // the operation fails when applied
		}
		if readsWithheld(pointerSegments(ptr)) {
			verb := op.Kind() + " from"
			if op.Kind() == "test" {
				verb = "test"
			}
			return patchFailed(k, name, fmt.Errorf("operation %d may not %s %q: a Secret's values are withheld (data, stringData and the %s annotation), a patch cannot read them",
				i, verb, ptr, v1.LastAppliedConfigAnnotation))
		}
	}
	return nil
}

// pointerSegments are the reference tokens of a JSON pointer as
// evanphx/json-patch v4 resolves them: whatever precedes the first "/" is
// ignored ("x/data" is /data), "~1" and "~0" are decoded; "" and a pointer
// without "/" are the whole document.
func pointerSegments(ptr string) []string {
	parts := strings.Split(ptr, "/")[1:]
	for i, p := range parts {
		parts[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(p)
	}
	return parts
}

// readsWithheld reports whether the place at segs holds or is within a
// withheld field.
func readsWithheld(segs []string) bool {
	for _, w := range withheldFields {
		n := min(len(segs), len(w))
		if slices.Equal(segs[:n], w[:n]) {
			return true
		}
	}
	return false
}
