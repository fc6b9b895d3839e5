package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/manifest"
)

// Limits of one PATCH. A patched object is persisted only if its manifest
// is at most 1 MiB (sources.MaxPushBytes) and a request body is at most 2
// MiB (server.MaxPushBody); these bound the work a patch may cause before
// that check, at sizes every object berth accepts fits.
const (
	// maxJSONPatchOps bounds the operations of one JSON patch, as the
	// apiserver bounds them.
	maxJSONPatchOps = 10000
	// maxPatchCopyBytes bounds what the copy operations of a JSON patch
	// add: twice the largest manifest, as the apiserver allows copies of
	// twice its largest object. Without it, copies doubling the document
	// reach gigabytes in a few dozen operations.
	maxPatchCopyBytes = 2 << 20
	// maxPatchedBytes bounds the JSON of a patched object, checked as a
	// JSON patch applies: the largest body a replace (PUT) may send.
	maxPatchedBytes = 2 << 20
	// patchTimeout bounds how long a JSON patch applies on the API's clock
	// (checked every jsonPatchChunk operations). A few operations take
	// microseconds; the slowest within the limits above take seconds.
	patchTimeout = 5 * time.Second
	// jsonPatchChunk is how many operations apply between two checks of
	// the deadline and the document's size. Each check re-reads the
	// document, so fewer checks cost less; more bound the work between
	// them better; about the square root of maxJSONPatchOps balances both.
	jsonPatchChunk = 64
	// maxPatchListItems bounds each list of a merge or strategic merge
	// patch, and of a written object (a body, a patched object).
	// Strategic merge compares each item of a list with every item of the
	// merged list: a list of 60 000 containers took minutes; decoding a
	// list of empty objects costs a kilobyte an item. No list of a pod,
	// ConfigMap or Secret berth runs comes near it (see
	// manifest.MaxListItems).
	maxPatchListItems = manifest.MaxListItems
	// maxPatchElements bounds the values (map entries and list items, at
	// every depth) of a patch and of a written object: a 1 MiB ConfigMap
	// of 10-byte entries has 100 000 keys.
	maxPatchElements = manifest.MaxValues
	// maxMergeWork bounds the item comparisons a strategic merge patch
	// may cost, estimated as the sum over its lists of items × (items +
	// the longest list of that field in the object): about a second of a
	// core. A pod at the container limit with 30 variables each, all
	// changed by `kubectl apply`, costs under 500 000.
	maxMergeWork = 10_000_000
)

// The apiserver sets this global of evanphx/json-patch v4 too: the version
// has no per-call option. Nothing else in berth applies JSON patches.
func init() { jsonpatch.AccumulatedCopySizeLimit = maxPatchCopyBytes }

// applyJSONPatch applies ops to cur, jsonPatchChunk operations at a time:
// past patchTimeout on the API's clock (from now) or past maxPatchedBytes
// between chunks it stops with a 413 naming the limit; ctx ending stops it
// too.
func (w *writer) applyJSONPatch(ctx context.Context, k writeKind, name string, ops jsonpatch.Patch, cur []byte) ([]byte, error) {
	clk := w.a.o.Clock
	deadline := clk.Now().Add(patchTimeout)
	doc := cur
	for start := 0; start < len(ops); start += jsonPatchChunk {
		if start > 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if !clk.Now().Before(deadline) {
				return nil, tooLarge(k, name, fmt.Sprintf("the JSON patch of %s %q did not apply within %s, berth's limit for one patch (%d of its %d operations applied)",
					k.resource, name, patchTimeout, start, len(ops)))
			}
		}
		var err error
		if doc, err = ops[start:min(start+jsonPatchChunk, len(ops))].Apply(doc); err != nil {
			var copyErr *jsonpatch.AccumulatedCopySizeError
			if errors.As(err, &copyErr) {
				return nil, patchFailed(k, name, fmt.Errorf("its copy operations add more than %d bytes, berth's limit for one patch (%v)", maxPatchCopyBytes, err))
			}
			return nil, patchFailed(k, name, err)
		}
		if err := checkPatchedSize(k, name, doc); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

// checkPatchedSize refuses (413) a patched object larger than
// maxPatchedBytes.
func checkPatchedSize(k writeKind, name string, doc []byte) error {
	if len(doc) <= maxPatchedBytes {
		return nil
	}
	return tooLarge(k, name, fmt.Sprintf("the patched %s %q is larger than %d bytes, berth's limit for a patched object", k.kind, name, maxPatchedBytes))
}

func tooLarge(k writeKind, name, msg string) error {
	return statusErr(http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge, k, name, msg)
}

// checkMergePatch refuses (413), before the patch is decoded, a merge or
// strategic merge patch (its JSON) with a list of more than
// maxPatchListItems items or more than maxPatchElements values; a
// strategic one (cur the object's JSON) also when its list merges would
// cost more than maxMergeWork. A scan of the JSON (manifest.ScanJSON)
// measures both without decoding them.
func checkMergePatch(k writeKind, name, typ string, patch, cur []byte) error {
	what := "merge patch"
	if typ == patchStrategic {
		what = "strategic merge patch"
	}
	s := manifest.ScanJSON(patch, manifest.ShapeLimits{ListItems: maxPatchListItems, Values: maxPatchElements, Lists: true})
	switch {
	case s.TooLong != nil:
		return tooLarge(k, name, fmt.Sprintf("the %s of %s %q has more than %d items in %s: at most %d items in one list of a patch; replace the object instead",
			what, k.resource, name, maxPatchListItems, s.TooLong.Path, maxPatchListItems))
	case s.TooMany:
		return tooLarge(k, name, fmt.Sprintf("the %s of %s %q has more than %d values (map entries and list items), at most %d in one patch",
			what, k.resource, name, maxPatchElements, maxPatchElements))
	case s.TooDeep:
		return badRequest(fmt.Sprintf("the %s nests deeper than JSON is decoded", what))
	case typ != patchStrategic:
		return nil
	}
	longestOf := map[string]int{}
	for _, l := range manifest.ScanJSON(cur, manifest.ShapeLimits{Lists: true}).Lists {
		f := listField(l.Key)
		longestOf[f] = max(longestOf[f], l.Items)
	}
	work := 0
	for _, l := range s.Lists {
		work += l.Items * (l.Items + longestOf[listField(l.Key)])
	}
	if work > maxMergeWork {
		return tooLarge(k, name, fmt.Sprintf("the %s of %s %q would compare about %d pairs of list items (items × (items + the object's items) of each list), at most %d in one patch; "+
			"send a merge patch or replace the object instead", what, k.resource, name, work, maxMergeWork))
	}
	return nil
}

// listField is the field a list held by key merges into: key less a
// strategic merge directive's prefix ($setElementOrder/containers,
// $deleteFromPrimitiveList/finalizers).
func listField(key string) string {
	if i := strings.IndexByte(key, '/'); strings.HasPrefix(key, "$") && i >= 0 {
		return key[i+1:]
	}
	return key
}

// checkJSONPatch refuses, before the patch is decoded, a JSON patch of
// more than maxJSONPatchOps operations (a 422, as the apiserver's) or whose
// values hold more than maxPatchElements values (413): decoding 2 MiB of
// `{},` costs a hundred times that.
func checkJSONPatch(k writeKind, name string, patch []byte) error {
	s := manifest.ScanJSON(patch, manifest.ShapeLimits{ListItems: maxJSONPatchOps, Values: maxPatchElements})
	switch {
	case s.TooLong != nil && s.TooLong.Path == "":
		return patchFailed(k, name, fmt.Errorf("the patch has more than %d operations", maxJSONPatchOps))
	case s.TooLong != nil:
		return tooLarge(k, name, fmt.Sprintf("the JSON patch of %s %q has more than %d items in %s, at most %d in one list of a patch",
			k.resource, name, maxJSONPatchOps, s.TooLong.Path, maxJSONPatchOps))
	case s.TooMany:
		return tooLarge(k, name, fmt.Sprintf("the JSON patch of %s %q has more than %d values (map entries and list items), at most %d in one patch",
			k.resource, name, maxPatchElements, maxPatchElements))
	case s.TooDeep:
		return badRequest("the JSON patch nests deeper than JSON is decoded")
	}
	return nil
}
