package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// expandProtoMessage appends field num holding the message msg to b.
func expandProtoMessage(b []byte, num protowire.Number, msg []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), msg)
}

// expandProtoPod is a Kubernetes protobuf body (the "k8s\0" envelope) of a
// Pod with n empty containers, two bytes each on the wire, built by hand
// as no client would build it.
func expandProtoPod(name string, n int) []byte {
	spec := make([]byte, 0, 2*n)
	for range n {
		spec = expandProtoMessage(spec, 2, nil)
	}
	meta := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), name)
	pod := expandProtoMessage(expandProtoMessage(nil, 1, meta), 2, spec)
	typeMeta := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "v1")
	typeMeta = protowire.AppendString(protowire.AppendTag(typeMeta, 2, protowire.BytesType), "Pod")
	return append([]byte("k8s\x00"), expandProtoMessage(expandProtoMessage(nil, 1, typeMeta), 2, pod)...)
}

// expandAliasBomb is a ConfigMap of 110 KB: one 100 KB scalar referenced by
// n aliases (100 MB of JSON for n = 1000).
func expandAliasBomb(name string, n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: default\n  annotations:\n    big: &v \"")
	b.WriteString(strings.Repeat("x", 100<<10))
	b.WriteString("\"\ndata:\n")
	for i := range n {
		fmt.Fprintf(&b, "  k%d: *v\n", i)
	}
	return b.String()
}

// TestExpansionAttacksWithAPushToken: bodies that a push token's holder
// sent to make berth expand a few MB into gigabytes. Each is refused at
// once, naming the limit, and berth stays small:
//   - a YAML alias bomb (100 KB × 1 000 aliases) through the push route and
//     through the Kubernetes API;
//   - a protobuf Pod of 1 000 000 empty containers (2 MB) through the API;
//   - a JSON Pod of 700 000 empty containers (2 MB) through the API.
//
// A Secret pushed as a List cannot be read by a patch either (kubeapi's
// TestSecretStoredAsListCannotLeak); here the push route's List is stored
// as the one Secret.
func TestExpansionAttacksWithAPushToken(t *testing.T) {
	b, admin, push := startWithPush(t)
	pods := b.URL("/api/v1/namespaces/default/pods")

	for _, tc := range []struct {
		what, method, url, ctype, body string
		code                           int
		want                           string
	}{
		{"YAML aliases through the push route", "PUT", b.URL("/configmaps/default/bomb"), "application/yaml",
			expandAliasBomb("bomb", 1000), http.StatusBadRequest, "aliases"},
		{"YAML aliases through the API", "POST", b.URL("/api/v1/namespaces/default/configmaps"), "application/yaml",
			expandAliasBomb("bomb", 1000), http.StatusRequestEntityTooLarge, "aliases"},
		{"protobuf containers", "POST", pods, "application/vnd.kubernetes.protobuf",
			string(expandProtoPod("bomb", 1000000)), http.StatusRequestEntityTooLarge, "spec.containers"},
		{"JSON containers", "POST", pods, "application/json",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bomb"},"spec":{"containers":[` +
				strings.TrimSuffix(strings.Repeat("{},", 690000), ",") + `]}}`, http.StatusRequestEntityTooLarge, "spec.containers"},
	} {
		start := time.Now()
		code, body := patchDo(t, tc.method, tc.url, push, tc.ctype, tc.body)
		t.Logf("%s (%d bytes): %d in %v: %.200s", tc.what, len(tc.body), code, time.Since(start).Round(time.Millisecond), body)
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %.300s, want %d naming %q", tc.what, code, body, tc.code, tc.want)
		}
	}

	aliveAndSmall(t, b, admin, "the bodies", 256<<20)

	// A Secret pushed in a List is stored, and patched, as the one Secret.
	list := `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Secret",` +
		`"metadata":{"name":"listed","namespace":"default","annotations":{"a":"b"}},"stringData":{"pw":"list-hunter2"}}]}`
	if code, body := patchDo(t, "PUT", b.URL("/secrets/default/listed"), push, "application/json", list); code != http.StatusCreated {
		t.Fatalf("push the List: %d %s", code, body)
	}
	secret := b.URL("/api/v1/namespaces/default/secrets/listed")
	code, body := patchDo(t, "PATCH", secret, push, "application/json-patch+json",
		`[{"op":"copy","from":"/items/0/stringData/pw","path":"/items/0/metadata/annotations/leak"},`+
			`{"op":"move","from":"/items/0/metadata","path":"/metadata"},{"op":"replace","path":"/kind","value":"Secret"}]`)
	if code/100 == 2 || strings.Contains(body, "list-hunter2") {
		t.Errorf("the patch through the List: %d %.300s", code, body)
	}
	if code, body := patchDo(t, "GET", secret, push, "", ""); code != http.StatusOK || strings.Contains(body, "list-hunter2") || strings.Contains(body, "leak") {
		t.Errorf("GET the Secret after the patch: %d %.300s", code, body)
	}
}
