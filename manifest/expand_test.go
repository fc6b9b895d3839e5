package manifest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/berth-dev/berth/internal/testutil"
)

// aliasBomb is a ConfigMap whose one scalar of size bytes is referenced by
// n aliases: size + a few bytes per alias of YAML, n × size of JSON.
func aliasBomb(size, n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\n  annotations:\n    big: &v \"")
	b.WriteString(strings.Repeat("x", size))
	b.WriteString("\"\ndata:\n")
	for i := range n {
		fmt.Fprintf(&b, "  k%d: *v\n", i)
	}
	return b.String()
}

// TestDecodeAliasBombRefused: a document whose aliases expand it past
// MaxExpandedBytes is refused, naming its origin, before it is expanded:
// 100 KB referenced 100 times (10 MB of JSON) costs about as much as the
// 100 KB document.
func TestDecodeAliasBombRefused(t *testing.T) {
	data := []byte(aliasBomb(100<<10, 100))
	var dec Decoded
	alloc := testutil.Allocated(func() { dec = DecodeAll("push", "/configmaps/default/bomb", data, Options{}) })
	t.Logf("%d bytes of YAML: %d MiB allocated, errors %v", len(data), alloc>>20, dec.Errors)
	if len(dec.Objects) != 0 || len(dec.Errors) != 1 {
		t.Fatalf("objects %d, errors %v: want one error", len(dec.Objects), dec.Errors)
	}
	e := dec.Errors[0]
	if e.Origin != "/configmaps/default/bomb" || e.PodKey != "" || !strings.Contains(e.Err, "aliases") ||
		!strings.Contains(e.Err, fmt.Sprint(MaxExpandedBytes)) {
		t.Errorf("error %+v: want a whole-origin error naming aliases and the limit", e)
	}
	if alloc > 16<<20 {
		t.Errorf("refusing the bomb allocated %d MiB, want a few", alloc>>20)
	}
}

// TestDecodeAliasValuesBounded: aliases that multiply values rather than
// bytes (a list of lists of empty maps) are refused past MaxExpandedValues.
func TestDecodeAliasValuesBounded(t *testing.T) {
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: many\n  annotations: {}\n" +
		"x: &a [" + repeatJoin("{}", ",", 1000) + "]\n" +
		"y: &b [" + repeatJoin("*a", ",", 200) + "]\n"
	dec := DecodeAll("push", "many.yaml", []byte(doc), Options{})
	if len(dec.Errors) != 1 || !strings.Contains(dec.Errors[0].Err, fmt.Sprint(MaxExpandedValues)) {
		t.Fatalf("errors %v: want one naming %d values", dec.Errors, MaxExpandedValues)
	}
}

// TestDecodeSmallAliasesKept: anchors, aliases and merge keys within the
// bounds decode as the document written out does.
func TestDecodeSmallAliasesKept(t *testing.T) {
	aliased := `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: &labels {app: web, tier: front}
  annotations: *labels
spec:
  containers:
  - name: a
    <<: &img {image: "img:1"}
    env: &env
    - {name: A, value: "1"}
    - {name: B, value: "*"}
  - <<: *img
    name: b
    env: *env
`
	written := `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web, tier: front}
  annotations: {app: web, tier: front}
spec:
  containers:
  - name: a
    image: img:1
    env:
    - {name: A, value: "1"}
    - {name: B, value: "*"}
  - name: b
    image: img:1
    env:
    - {name: A, value: "1"}
    - {name: B, value: "*"}
`
	a := decodeOK(t, aliased, Options{})
	w := decodeOK(t, written, Options{})
	if len(a) != 1 || len(w) != 1 || !reflect.DeepEqual(a[0].Pod, w[0].Pod) {
		t.Fatalf("the aliased pod differs from the written one:\n%+v\n%+v", a, w)
	}
}

// TestDecodeSelfAliasRefused: an alias inside its own anchor is an error,
// not a loop.
func TestDecodeSelfAliasRefused(t *testing.T) {
	for _, doc := range []string{"a: &a [*a, *a]\n", "a: &a {b: *a}\nkind: Pod\n"} {
		dec := DecodeAll("s", "self.yaml", []byte(doc), Options{})
		if len(dec.Errors) == 0 || dec.Errors[0].PodKey != "" {
			t.Errorf("%q: errors %v, want a whole-origin error", doc, dec.Errors)
		}
	}
}

// TestDecodeListBombRefused: an object's list longer than MaxListItems is
// refused by a scan of its JSON, before it is decoded into Go values: 1 MiB
// of empty containers, `{},`, decoded to gigabytes.
func TestDecodeListBombRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[`)
	for b.Len() < 1<<20-8 {
		b.WriteString("{},")
	}
	b.WriteString("{}]}}")
	var dec Decoded
	alloc := testutil.Allocated(func() { dec = DecodeAll("push", "/pods/default/x", []byte(b.String()), Options{DeriveUIDs: true}) })
	t.Logf("%d bytes: %d MiB allocated, errors %v", b.Len(), alloc>>20, dec.Errors)
	if len(dec.Pods) != 0 || len(dec.Errors) != 1 {
		t.Fatalf("pods %d, errors %v: want one error", len(dec.Pods), dec.Errors)
	}
	if e := dec.Errors[0]; e.PodKey != "default/x" || e.Field != "spec.containers" || !strings.Contains(e.Err, fmt.Sprint(MaxListItems)) {
		t.Errorf("error %+v: want spec.containers of default/x naming %d", e, MaxListItems)
	}
	if alloc > 32<<20 {
		t.Errorf("refusing the list allocated %d MiB, want a few", alloc>>20)
	}
}

// TestDecodeListBoundFollowsMaxContainers: a source allowing more
// containers than MaxListItems may declare them.
func TestDecodeListBoundFollowsMaxContainers(t *testing.T) {
	var cs []string
	for i := range 1200 {
		cs = append(cs, fmt.Sprintf(`{"name":"c%d","image":"i"}`, i))
	}
	doc := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[` + strings.Join(cs, ",") + `]}}`
	if pods := decodeOK(t, doc, Options{MaxContainers: 2000}); len(pods) != 1 {
		t.Fatalf("%d pods", len(pods))
	}
}
