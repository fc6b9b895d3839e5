package kubeapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/openapi3"
	"k8s.io/kube-openapi/pkg/spec3"
)

// fieldValidationOnPatch is kubectl's check (cli-runtime's
// supportsQueryParamV3): a PATCH operation of gvk with the query
// parameter fieldValidation.
func fieldValidationOnPatch(doc *spec3.OpenAPI, gvk schema.GroupVersionKind) bool {
	for _, p := range doc.Paths.Paths {
		op := p.Patch
		if op == nil {
			continue
		}
		var got map[string]string
		if op.Extensions.GetObject("x-kubernetes-group-version-kind", &got) != nil ||
			got["group"] != gvk.Group || got["version"] != gvk.Version || got["kind"] != gvk.Kind {
			continue
		}
		for _, param := range op.Parameters {
			if param.Name == "fieldValidation" && param.In == "query" {
				return true
			}
		}
	}
	return false
}

func TestOpenAPIV3(t *testing.T) {
	f := newFixture(t, Options{})
	// The write side's routes, as AddWrites adds them.
	for _, m := range []string{"POST /api/v1/namespaces/{ns}/pods", "PATCH /api/v1/namespaces/{ns}/pods/{name}"} {
		f.api.handle(m, AccessWrite, func(http.ResponseWriter, *http.Request) {})
	}
	root := openapi3.NewRoot(f.cs.Discovery().OpenAPIV3())
	gvs, err := root.GroupVersions()
	if err != nil {
		t.Fatal(err)
	}
	if len(gvs) != 3 {
		t.Fatalf("group versions %v", gvs)
	}
	doc, err := root.GVSpec(schema.GroupVersion{Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	pod := doc.Components.Schemas["io.k8s.api.core.v1.Pod"]
	if pod == nil {
		t.Fatal("no Pod schema")
	}
	var gvk []map[string]string
	if err := pod.Extensions.GetObject("x-kubernetes-group-version-kind", &gvk); err != nil || len(gvk) != 1 || gvk[0]["kind"] != "Pod" {
		t.Fatalf("Pod gvk %v %v", gvk, err)
	}
	if !strings.Contains(pod.Description, "Pod is a collection of containers") {
		t.Fatalf("Pod description %q", pod.Description)
	}
	spec := doc.Components.Schemas["io.k8s.api.core.v1.PodSpec"]
	containers := spec.Properties["containers"]
	if containers.Extensions["x-kubernetes-patch-merge-key"] != "name" || containers.Extensions["x-kubernetes-patch-strategy"] != "merge" {
		t.Fatalf("containers extensions %v", containers.Extensions)
	}
	if q := doc.Components.Schemas["io.k8s.apimachinery.pkg.api.resource.Quantity"]; q == nil || len(q.OneOf) != 2 {
		t.Fatalf("Quantity %+v", q)
	}
	if !fieldValidationOnPatch(doc, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}) {
		t.Fatal("kubectl would not find fieldValidation on the Pod's PATCH")
	}
	if fieldValidationOnPatch(doc, schema.GroupVersionKind{Version: "v1", Kind: "Node"}) {
		t.Fatal("a Node PATCH without a route")
	}
	var patchOp *spec3.Operation
	for path, p := range doc.Paths.Paths {
		if path == "/api/v1/namespaces/{namespace}/pods/{name}" {
			patchOp = p.Patch
		}
	}
	if patchOp == nil || patchOp.RequestBody.Content["application/strategic-merge-patch+json"] == nil {
		t.Fatal("no strategic merge PATCH of pods")
	}

	// kubectl apply computes its patch from the schema: a container is
	// merged by name, not the list replaced.
	meta := strategicpatch.PatchMetaFromOpenAPIV3{SchemaList: doc.Components.Schemas, Schema: pod}
	cur := v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a", Image: "x"}, {Name: "b", Image: "y"}}}}
	mod := cur.DeepCopy()
	mod.Spec.Containers[1].Image = "z"
	oj, _ := json.Marshal(cur)
	mj, _ := json.Marshal(mod)
	patch, err := strategicpatch.CreateThreeWayMergePatch(oj, mj, oj, meta, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"b"}],"containers":[{"image":"z","name":"b"}]}}`; string(patch) != want {
		t.Fatalf("patch %s, want %s", patch, want)
	}

	mdoc, err := root.GVSpec(schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"})
	if err != nil || mdoc.Components.Schemas["io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics"] == nil {
		t.Fatalf("metrics document: %v", err)
	}
}
