package openapi

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"testing"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
)

// Build documents only the verbs it is given, each write with kubectl's
// fieldValidation, and the index names each document by its hash.
func TestBuildDocumentsServedVerbs(t *testing.T) {
	index, docs, err := Build(Spec{Version: "v9", Groups: []Group{{Path: "api/v1", GroupVersion: "v1", Resources: []Resource{{
		Name: "configmaps", Kind: "ConfigMap", ListKind: "ConfigMapList", Namespaced: true,
		Object: v1.ConfigMap{}, List: v1.ConfigMapList{}, Verbs: []string{"get", "list", "patch"},
	}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Paths map[string]struct{ ServerRelativeURL string }
	}
	if err := json.Unmarshal(index, &idx); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("/openapi/v3/api/v1?hash=%X", sha512.Sum512(docs["api/v1"])); idx.Paths["api/v1"].ServerRelativeURL != want {
		t.Fatalf("index %s, want %s", index, want)
	}
	var doc struct {
		Info       struct{ Version string }
		Paths      map[string]map[string]json.RawMessage
		Components struct{ Schemas map[string]any }
	}
	if err := json.Unmarshal(docs["api/v1"], &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Info.Version != "v9" || doc.Components.Schemas["io.k8s.api.core.v1.ConfigMap"] == nil {
		t.Fatalf("info %v, schemas %d", doc.Info, len(doc.Components.Schemas))
	}
	item := doc.Paths["/api/v1/namespaces/{namespace}/configmaps/{name}"]
	if _, ok := item["put"]; ok {
		t.Fatal("PUT documented without its verb")
	}
	var patch struct {
		Parameters  []struct{ Name string }
		RequestBody struct{ Content map[string]any }
	}
	if err := json.Unmarshal(item["patch"], &patch); err != nil || patch.RequestBody.Content["application/strategic-merge-patch+json"] == nil {
		t.Fatalf("patch %+v", item)
	}
	found := false
	for _, p := range patch.Parameters {
		found = found || p.Name == "fieldValidation"
	}
	if !found {
		t.Fatal("kubectl would not find fieldValidation on the PATCH")
	}
	if _, ok := doc.Paths["/api/v1/configmaps"]["get"]; !ok {
		t.Fatal("no list across namespaces")
	}
}

// The legacy document parses as client-go parses it (protobuf) and as
// JSON, and describes no kind.
func TestLegacyDocument(t *testing.T) {
	b, ctype, err := LegacyDocument("v9", true)
	if err != nil || ctype != LegacyProtobuf {
		t.Fatal(ctype, err)
	}
	var doc openapiv2.Document
	if err := proto.Unmarshal(b, &doc); err != nil || doc.Swagger != "2.0" || doc.Info.GetVersion() != "v9" || len(doc.Definitions.GetAdditionalProperties()) != 0 {
		t.Fatalf("protobuf %+v %v", &doc, err)
	}
	b, ctype, err = LegacyDocument("v9", false)
	var m map[string]any
	if err != nil || ctype != LegacyJSON || json.Unmarshal(b, &m) != nil || m["swagger"] != "2.0" {
		t.Fatalf("json %s %s %v", b, ctype, err)
	}
}
