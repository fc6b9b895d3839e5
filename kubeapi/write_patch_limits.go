package kubeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	// patch. Strategic merge compares each item of a list with every item
	// of the merged list: a list of 60 000 containers took minutes. No
	// list of a pod, ConfigMap or Secret berth runs comes near it (at
	// most max_containers_per_pod containers, 100 host ports, 32 DNS
	// searches; ConfigMap and Secret data are maps, not lists).
	maxPatchListItems = 1000
	// maxPatchElements bounds the values (map entries and list items, at
	// every depth) of a merge or strategic merge patch: a 1 MiB ConfigMap
	// of 10-byte entries has 100 000 keys.
	maxPatchElements = 100000
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

// checkMergePatch refuses (413), before merging, a merge or strategic merge
// patch (decoded) with a list of more than maxPatchListItems items or more
// than maxPatchElements values; a strategic one (cur the object's JSON)
// also when its list merges would cost more than maxMergeWork.
func checkMergePatch(k writeKind, name, typ string, patch any, cur []byte) error {
	what := "merge patch"
	if typ == patchStrategic {
		what = "strategic merge patch"
	}
	s := &patchShape{bounded: true}
	s.walk(patch, nil, "")
	switch {
	case s.tooLong != nil:
		return tooLarge(k, name, fmt.Sprintf("the %s of %s %q has %d items in %s: at most %d items in one list of a patch; replace the object instead",
			what, k.resource, name, s.tooLong.n, s.tooLong.at, maxPatchListItems))
	case s.elements > maxPatchElements:
		return tooLarge(k, name, fmt.Sprintf("the %s of %s %q has more than %d values (map entries and list items), at most %d in one patch",
			what, k.resource, name, maxPatchElements, maxPatchElements))
	case typ != patchStrategic:
		return nil
	}
	var c any
	if err := json.Unmarshal(cur, &c); err != nil {
		return nil // the merge reports it
	}
	obj := &patchShape{}
	obj.walk(c, nil, "")
	work := 0
	for _, l := range s.lists {
		work += l.n * (l.n + obj.longestOf[l.field])
	}
	if work > maxMergeWork {
		return tooLarge(k, name, fmt.Sprintf("the %s of %s %q would compare about %d pairs of list items (items × (items + the object's items) of each list), at most %d in one patch; "+
			"send a merge patch or replace the object instead", what, k.resource, name, work, maxMergeWork))
	}
	return nil
}

// patchShape is what walk saw of a decoded JSON value: how many values,
// each list's length and field, and the longest list of each field. When
// bounded, walk stops at the first list longer than maxPatchListItems
// (tooLong) or past maxPatchElements values.
type patchShape struct {
	bounded   bool
	elements  int
	lists     []list
	longestOf map[string]int
	tooLong   *list
}

type list struct {
	n     int
	field string // the map key holding the list, less a strategic merge directive's prefix
	at    *step
}

// step is one step of the path to a value: a map key, or a list index.
type step struct {
	up    *step
	key   string
	index int
}

// String renders the path as Kubernetes names fields: spec.containers[0].env.
func (s *step) String() string {
	var parts []string
	for ; s != nil; s = s.up {
		if s.key != "" {
			parts = append(parts, s.key)
		} else {
			parts = append(parts, "["+strconv.Itoa(s.index)+"]")
		}
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		if b.Len() > 0 && !strings.HasPrefix(parts[i], "[") {
			b.WriteByte('.')
		}
		b.WriteString(parts[i])
	}
	return b.String()
}

// walk records v, at path at under field; false when a bound stopped it.
func (s *patchShape) walk(v any, at *step, field string) bool {
	switch v := v.(type) {
	case map[string]any:
		for key, child := range v {
			if !s.count() {
				return false
			}
			f := key
			if i := strings.IndexByte(key, '/'); strings.HasPrefix(key, "$") && i >= 0 {
				f = key[i+1:] // $setElementOrder/containers, $deleteFromPrimitiveList/finalizers
			}
			if !s.walk(child, &step{up: at, key: key}, f) {
				return false
			}
		}
	case []any:
		l := list{n: len(v), field: field, at: at}
		if s.bounded && l.n > maxPatchListItems {
			s.tooLong = &l
			return false
		}
		s.lists = append(s.lists, l)
		if s.longestOf == nil {
			s.longestOf = map[string]int{}
		}
		s.longestOf[field] = max(s.longestOf[field], l.n)
		for i, child := range v {
			if !s.count() || !s.walk(child, &step{up: at, index: i}, field) {
				return false
			}
		}
	}
	return true
}

// count counts one value; false past maxPatchElements when bounded.
func (s *patchShape) count() bool {
	s.elements++
	return !s.bounded || s.elements <= maxPatchElements
}
