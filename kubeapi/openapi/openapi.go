// Package openapi builds the OpenAPI v3 documents of the API berth serves:
// the index of group versions (each URL carrying its document's hash, as
// client-go caches by it) and one document per group version, with the
// schemas of its kinds generated from their Go types and an operation per
// served verb. It serves nothing; kubeapi mounts the documents.
package openapi

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Spec is what the documents describe.
type Spec struct {
	// Version is berth's version, the documents' info.version.
	Version string
	// Groups are the served group versions, in the index's order.
	Groups []Group
	// Names are the schema names of types whose Go package is not their
	// API's (metrics.k8s.io's types live in kubeapi).
	Names map[reflect.Type]string
}

// Group is one group version: Path is its document's path under
// /openapi/v3 ("api/v1", "apis/<group>/<version>").
type Group struct {
	Path, GroupVersion string
	Resources          []Resource
}

// Resource is one served resource of a group version.
type Resource struct {
	// Name is the resource ("pods"), Kind and ListKind its kinds.
	Name, Kind, ListKind string
	Namespaced           bool
	// Object and List are zero values of the kind's and the list's Go
	// types, whose schemas the document carries.
	Object, List any
	// Verbs are those served on the collection and its items, as
	// discovery lists them; an operation is documented per verb.
	Verbs []string
	// Status: GET of the item's status subresource is served.
	Status bool
}

// Build returns the index and the document of each group (by its Path).
func Build(s Spec) (index []byte, docs map[string][]byte, err error) {
	docs = map[string][]byte{}
	paths := map[string]any{}
	for _, g := range s.Groups {
		doc, err := json.Marshal(document(s, g))
		if err != nil {
			return nil, nil, err
		}
		docs[g.Path] = doc
		sum := sha512.Sum512(doc)
		paths[g.Path] = map[string]string{"serverRelativeURL": fmt.Sprintf("/openapi/v3/%s?hash=%X", g.Path, sum)}
	}
	index, err = json.Marshal(map[string]any{"paths": paths})
	return index, docs, err
}

// document is the OpenAPI v3 document of g: the schemas of its kinds
// (x-kubernetes-group-version-kind on each top-level one) and an operation
// per served verb. PATCH, POST and PUT declare the fieldValidation
// parameter, which kubectl looks for to leave validation to the server,
// and PATCH its patch types, strategic merge included, which kubectl apply
// looks for to compute its patch from the schema.
func document(s Spec, grp Group) map[string]any {
	groupVersion := grp.GroupVersion
	gv, _ := schema.ParseGroupVersion(groupVersion)
	g := newSchemaGen()
	for t, n := range s.Names {
		g.names[t] = n
	}
	gvk := func(kind string) map[string]string {
		return map[string]string{"group": gv.Group, "version": gv.Version, "kind": kind}
	}
	topLevel := func(t any, k map[string]string) string {
		name := g.define(reflect.TypeOf(t))
		g.schemas[name]["x-kubernetes-group-version-kind"] = []any{k}
		return name
	}
	status := topLevel(metav1.Status{}, map[string]string{"group": "", "version": "v1", "kind": "Status"})
	deleteOptions := g.define(reflect.TypeOf(metav1.DeleteOptions{}))
	g.define(reflect.TypeOf(metav1.Patch{}))
	prefix := "/api/v1"
	if gv.Group != "" {
		prefix = "/apis/" + groupVersion
	}
	paths := map[string]any{}
	for _, res := range grp.Resources {
		obj := topLevel(res.Object, gvk(res.Kind))
		list := topLevel(res.List, gvk(res.ListKind))
		o := opBuilder{kind: res.Kind, gvk: gvk(res.Kind), tag: strings.NewReplacer(".", "_", "/", "_").Replace(strings.TrimPrefix(groupVersion, "/")),
			status: status}
		if gv.Group == "" {
			o.tag = "core_" + gv.Version
		}
		coll, item := prefix+"/"+res.Name, prefix+"/"+res.Name+"/{name}"
		if res.Namespaced {
			paths[coll] = map[string]any{"get": o.op("list", res.ListKind+"ForAllNamespaces", list, nil, false)}
			coll, item = prefix+"/namespaces/{namespace}/"+res.Name, prefix+"/namespaces/{namespace}/"+res.Name+"/{name}"
		}
		collOps, itemOps := map[string]any{}, map[string]any{}
		for _, verb := range res.Verbs {
			switch verb {
			case "list":
				collOps["get"] = o.op("list", res.ListKind, list, nil, false)
			case "create":
				collOps["post"] = o.op("post", res.Kind, obj, obj, true)
			case "deletecollection":
				collOps["delete"] = o.op("deletecollection", res.Kind, status, deleteOptions, false)
			}
		}
		for _, verb := range res.Verbs {
			switch verb {
			case "get":
				itemOps["get"] = o.op("get", res.Kind, obj, nil, false)
			case "update":
				itemOps["put"] = o.op("put", res.Kind, obj, obj, true)
			case "patch":
				itemOps["patch"] = o.op("patch", res.Kind, obj, "", true)
			case "delete":
				itemOps["delete"] = o.op("delete", res.Kind, obj, deleteOptions, false)
			}
		}
		if len(collOps) > 0 {
			collOps["parameters"] = pathParams(res.Namespaced, false)
			paths[coll] = collOps
		}
		if len(itemOps) > 0 {
			itemOps["parameters"] = pathParams(res.Namespaced, true)
			paths[item] = itemOps
		}
		if res.Status {
			paths[item+"/status"] = map[string]any{"get": o.op("get", res.Kind+"Status", obj, nil, false),
				"parameters": pathParams(res.Namespaced, true)}
		}
	}
	return map[string]any{
		"openapi": "3.0.0",
		"info":    map[string]string{"title": "berth", "version": s.Version},
		"paths":   paths,
		"components": map[string]any{
			"schemas":         g.schemas,
			"securitySchemes": map[string]any{"BearerToken": map[string]string{"type": "apiKey", "name": "authorization", "in": "header"}},
		},
	}
}

// opBuilder makes the operations of one kind.
type opBuilder struct {
	kind   string
	gvk    map[string]string
	tag    string
	status string
}

// op is one operation: action is the x-kubernetes-action; body is the
// request body's schema ("" for a patch, nil for none); write operations
// take dryRun, fieldManager and fieldValidation.
func (o opBuilder) op(action, name, response string, body any, write bool) map[string]any {
	verb := map[string]string{"list": "list", "post": "create", "put": "replace", "patch": "patch", "delete": "delete",
		"deletecollection": "deletecollection", "get": "read"}[action]
	op := map[string]any{
		"tags":        []string{o.tag},
		"operationId": verb + strings.ToUpper(o.tag[:1]) + o.tag[1:] + name,
		"description": fmt.Sprintf("%s %s", verb, o.kind),
		"responses": map[string]any{
			"200": content("OK", response),
			"401": map[string]string{"description": "Unauthorized"},
		},
		"x-kubernetes-action":             action,
		"x-kubernetes-group-version-kind": o.gvk,
	}
	var params []any
	switch action {
	case "list":
		op["x-kubernetes-action"] = "list"
		for _, p := range []string{"allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit",
			"resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch"} {
			params = append(params, queryParam(p))
		}
	case "post":
		op["responses"].(map[string]any)["201"] = content("Created", response)
	}
	if write {
		for _, p := range []string{"dryRun", "fieldManager", "fieldValidation"} {
			params = append(params, queryParam(p))
		}
	}
	if action == "patch" {
		params = append(params, queryParam("force"))
		types := map[string]any{}
		for _, t := range []string{"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"} {
			types[t] = map[string]any{"schema": ref("io.k8s.apimachinery.pkg.apis.meta.v1.Patch")}
		}
		op["requestBody"] = map[string]any{"content": types, "required": true}
	} else if name, ok := body.(string); ok && body != nil {
		op["requestBody"] = map[string]any{"content": map[string]any{"*/*": map[string]any{"schema": ref(name)}}, "required": action != "delete" && action != "deletecollection"}
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	return op
}

func content(desc, schemaName string) map[string]any {
	return map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{"schema": ref(schemaName)}}}
}

var queryDocs = map[string]string{
	"fieldValidation": "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields: Ignore, Warn or Strict.",
	"dryRun":          "When present, indicates that modifications should not be persisted. The only valid value is All.",
	"fieldManager":    "fieldManager is a name associated with the actor or entity that is making these changes.",
}

func queryParam(name string) map[string]any {
	typ := "string"
	switch name {
	case "allowWatchBookmarks", "sendInitialEvents", "watch", "force":
		typ = "boolean"
	case "limit", "timeoutSeconds":
		typ = "integer"
	}
	p := map[string]any{"name": name, "in": "query", "schema": map[string]string{"type": typ}, "uniqueItems": true}
	if d := queryDocs[name]; d != "" {
		p["description"] = d
	}
	return p
}

func pathParams(namespaced, item bool) []any {
	var out []any
	if item {
		out = append(out, map[string]any{"name": "name", "in": "path", "required": true, "schema": map[string]string{"type": "string"}, "uniqueItems": true})
	}
	if namespaced {
		out = append(out, map[string]any{"name": "namespace", "in": "path", "required": true, "schema": map[string]string{"type": "string"}, "uniqueItems": true})
	}
	return out
}
