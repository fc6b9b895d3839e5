package kubeapi

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/manifest"

	"github.com/berth-dev/berth/internal/testutil"
)

// maxRefusalAlloc is what refusing one of the bodies below may allocate:
// a few copies of the body. Without the bounds each cost hundreds of MiB.
const maxRefusalAlloc = 32 << 20

// protoMessage appends field num holding the message msg to b.
func protoMessage(b []byte, num protowire.Number, msg []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), msg)
}

// protoPodBomb is a Kubernetes protobuf Pod body (runtime.Unknown in the
// "k8s\0" envelope) built by hand: n empty containers, two bytes each.
func protoPodBomb(name string, n int) []byte {
	var spec []byte
	for range n {
		spec = protoMessage(spec, 2, nil) // PodSpec.containers
	}
	meta := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), name) // ObjectMeta.name
	pod := protoMessage(protoMessage(nil, 1, meta), 2, spec)
	typeMeta := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "v1")
	typeMeta = protowire.AppendString(protowire.AppendTag(typeMeta, 2, protowire.BytesType), "Pod")
	unknown := protoMessage(protoMessage(nil, 1, typeMeta), 2, pod)
	return append([]byte("k8s\x00"), unknown...)
}

// jsonPodBomb is a Pod whose containers are n empty objects.
func jsonPodBomb(name string, n int) string {
	return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `"},"spec":{"containers":[` +
		strings.TrimSuffix(strings.Repeat("{},", n), ",") + `]}}`
}

// yamlAliasBomb is a ConfigMap of one scalar of size bytes referenced by n
// aliases.
func yamlAliasBomb(name string, size, n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  annotations:\n    big: &v \"")
	b.WriteString(strings.Repeat("x", size))
	b.WriteString("\"\ndata:\n")
	for i := range n {
		fmt.Fprintf(&b, "  k%d: *v\n", i)
	}
	return b.String()
}

// refusedSmall sends a body and wants code, a message holding each of
// want, and at most maxRefusalAlloc allocated.
func (f *writeFixture) refusedSmall(t *testing.T, what, method, path, ctype, body string, code int, want ...string) {
	t.Helper()
	var got int
	var answer string
	alloc := testutil.Allocated(func() { got, _, answer = f.do(t, method, path, ctype, body, "Authorization", "Bearer push") })
	t.Logf("%s (%d bytes): %d, %d MiB allocated: %.200s", what, len(body), got, alloc>>20, answer)
	if got != code {
		t.Errorf("%s: %d %.300s, want %d", what, got, answer, code)
	}
	for _, w := range want {
		if !strings.Contains(answer, w) {
			t.Errorf("%s: the answer does not name %q: %.300s", what, w, answer)
		}
	}
	if alloc > maxRefusalAlloc {
		t.Errorf("%s: refusing it allocated %d MiB, more than %d", what, alloc>>20, maxRefusalAlloc>>20)
	}
}

// TestCreateProtobufListBombRefused: a protobuf body of 100 000 empty
// containers (2 bytes each) is refused by a walk of its wire format,
// before it is decoded, naming the list and the limit.
func TestCreateProtobufListBombRefused(t *testing.T) {
	f := newWriteFixture(t)
	f.refusedSmall(t, "protobuf create", "POST", "/api/v1/namespaces/default/pods", mediaProtobuf,
		string(protoPodBomb("bomb", 100000)), http.StatusRequestEntityTooLarge, "spec.containers", fmt.Sprint(maxPatchListItems))
	// A small protobuf pod still decodes.
	if code, _, body := f.do(t, "POST", "/api/v1/namespaces/default/pods", mediaProtobuf, string(protoPodBomb("one", 1))); code != http.StatusUnprocessableEntity ||
		!strings.Contains(body, "image") {
		t.Errorf("one empty container: %d %.300s, want 422 on its missing image", code, body)
	}
}

// TestCreateJSONListBombRefused: a create or replace whose JSON holds a
// list of 100 000 empty objects is refused by a scan of the JSON before it
// is decoded, naming the list and the limit.
func TestCreateJSONListBombRefused(t *testing.T) {
	f := newWriteFixture(t)
	bomb := jsonPodBomb("web", 100000)
	f.refusedSmall(t, "JSON create", "POST", "/api/v1/namespaces/default/pods", "application/json", bomb,
		http.StatusRequestEntityTooLarge, "spec.containers", fmt.Sprint(maxPatchListItems))
	if _, err := f.cs.CoreV1().Pods("default").Create(bg, testPod("web", "img:1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.refusedSmall(t, "JSON replace", "PUT", podPath, "application/json", bomb,
		http.StatusRequestEntityTooLarge, "spec.containers", fmt.Sprint(maxPatchListItems))
	// Values beyond the bound, in maps: 110 000 labels.
	var labels []string
	for i := range 110000 {
		labels = append(labels, fmt.Sprintf(`"l%d":""`, i))
	}
	f.refusedSmall(t, "JSON labels", "PUT", podPath, "application/json",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","labels":{`+strings.Join(labels, ",")+`}},"spec":{"containers":[{"name":"app","image":"i"}]}}`,
		http.StatusRequestEntityTooLarge, fmt.Sprint(maxPatchElements))
}

// TestMergePatchListBombRefused: a merge or strategic merge patch of a
// list of 600 000 empty objects (1.8 MB, within the body limit) is refused
// before it is decoded.
func TestMergePatchListBombRefused(t *testing.T) {
	f := newWriteFixture(t)
	if _, err := f.cs.CoreV1().Pods("default").Create(bg, testPod("web", "img:1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := `{"spec":{"containers":[` + strings.TrimSuffix(strings.Repeat("{},", 600000), ",") + `]}}`
	for _, typ := range []string{patchMerge, patchStrategic} {
		f.refusedSmall(t, typ, "PATCH", podPath, typ, patch, http.StatusRequestEntityTooLarge, "spec.containers", fmt.Sprint(maxPatchListItems))
	}
}

// TestCreateYAMLAliasBombRefused: a YAML body whose aliases expand it past
// manifest.MaxExpandedBytes is refused before it is expanded.
func TestCreateYAMLAliasBombRefused(t *testing.T) {
	f := newWriteFixture(t)
	f.refusedSmall(t, "YAML aliases", "POST", "/api/v1/namespaces/default/configmaps", "application/yaml",
		yamlAliasBomb("bomb", 100<<10, 100), http.StatusRequestEntityTooLarge, "aliases", fmt.Sprint(manifest.MaxExpandedBytes))
	// Small aliases are taken.
	if code, _, body := f.do(t, "POST", "/api/v1/namespaces/default/configmaps", "application/yaml", yamlAliasBomb("small", 10, 3)); code != http.StatusCreated {
		t.Errorf("small aliases: %d %.300s", code, body)
	}
}

// TestSecretStoredAsListCannotLeak is a push client's attack on a Secret
// pushed as a List holding it: a JSON patch copying
// /items/0/stringData/pw into an annotation, moving the item's metadata to
// the top and naming the kind Secret would have GET serve the value. The
// patch applies to the Secret as decoded, where no /items is; the same
// holds for a file that still holds the List.
func TestSecretStoredAsListCannotLeak(t *testing.T) {
	f := newWriteFixture(t)
	pushSrv := httptest.NewServer(func() http.Handler {
		mux := http.NewServeMux()
		for p, h := range f.push.Routes() {
			mux.Handle(p, h)
		}
		return mux
	}())
	t.Cleanup(pushSrv.Close)
	const value = "list-hunter2"
	list := `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Secret",` +
		`"metadata":{"name":"s","namespace":"default","annotations":{"a":"b"}},"stringData":{"pw":"` + value + `"}}]}`
	req, _ := http.NewRequest("PUT", pushSrv.URL+"/secrets/default/s", strings.NewReader(list))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("push the List: %s", resp.Status)
	}
	// The push route answers before the store shows the object.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		code, _, _ := f.do(t, "GET", "/api/v1/namespaces/default/secrets/s", "", "", "Authorization", "Bearer push")
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pushed Secret is not served: GET %d", code)
		}
	}
	// The reviewer's sequence, and the same dropping the List's items.
	attack := `[{"op":"copy","from":"/items/0/stringData/pw","path":"/items/0/metadata/annotations/leak"},` +
		`{"op":"move","from":"/items/0/metadata","path":"/metadata"},` +
		`{"op":"replace","path":"/kind","value":"Secret"}]`
	attacks := []string{attack, strings.TrimSuffix(attack, "]") + `,{"op":"remove","path":"/items"}]`}
	path := "/api/v1/namespaces/default/secrets/s"
	try := func(what string) {
		t.Helper()
		for _, a := range attacks {
			code, _, body := f.do(t, "PATCH", path, patchJSON, a, "Authorization", "Bearer push")
			assertNoValue(t, what+": the patch", body, value)
			if code/100 == 2 {
				t.Errorf("%s: the patch %s applied: %d %.300s", what, a, code, body)
			}
			code, _, body = f.do(t, "GET", path, "", "", "Authorization", "Bearer push")
			if code != http.StatusOK {
				t.Fatalf("%s: GET %d %s", what, code, body)
			}
			assertNoValue(t, what+": GET", body, value)
		}
	}
	try("as pushed")

	// A file of the push directory written before the source stored one
	// object per file: the List as received.
	file := filepath.Join(f.dir, "default_s_secret.yaml")
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(list), 0o600); err != nil {
		t.Fatal(err)
	}
	try("stored as a List")
	if code, _, body := f.do(t, "PATCH", path, patchMerge, `{"metadata":{"labels":{"x":"y"}}}`, "Authorization", "Bearer push"); code != http.StatusOK {
		t.Errorf("a merge patch of the Secret stored as a List: %d %.300s", code, body)
	}
	data, _ := os.ReadFile(file)
	if !strings.Contains(string(data), "kind: Secret") || strings.Contains(string(data), "List") ||
		!strings.Contains(string(data), base64.StdEncoding.EncodeToString([]byte(value))) {
		t.Errorf("after the merge patch, the file holds:\n%s\nwant the one Secret, its value in data", data)
	}
}
