package kubeapi

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// openAPIGroups are the served group versions with their OpenAPI v3 path
// (api/v1, apis/<group>/<version>).
var openAPIGroups = []struct{ path, groupVersion string }{
	{"api/v1", "v1"},
	{"apis/" + LeaseGroupVersion, LeaseGroupVersion},
	{"apis/" + MetricsGroupVersion, MetricsGroupVersion},
}

// listTypes are the Go types of the served lists, for their schemas.
var listTypes = map[string]any{
	"PodList": v1.PodList{}, "EventList": v1.EventList{}, "NodeList": v1.NodeList{}, "ConfigMapList": v1.ConfigMapList{},
	"SecretList": v1.SecretList{}, "NamespaceList": v1.NamespaceList{}, "PersistentVolumeClaimList": v1.PersistentVolumeClaimList{},
	"LeaseList": coordinationv1.LeaseList{}, "PodMetricsList": PodMetricsList{}, "NodeMetricsList": NodeMetricsList{},
}

// openAPI holds the documents, built once at the first request, when every
// route is added.
type openAPI struct {
	once  sync.Once
	index []byte
	docs  map[string][]byte
	err   error
}

// openAPIRoutes serves GET /openapi/v3 (the index of group versions, each
// with its serverRelativeURL carrying the document's hash, as client-go
// caches by it) and the document of each group version.
func (a *API) openAPIRoutes() {
	o := &openAPI{}
	build := func() error {
		o.once.Do(func() { o.index, o.docs, o.err = a.buildOpenAPI() })
		return o.err
	}
	a.handle("GET /openapi/v3", AccessRead, func(w http.ResponseWriter, r *http.Request) {
		if err := build(); err != nil {
			WriteError(w, err)
			return
		}
		writeRaw(w, o.index)
	})
	for _, g := range openAPIGroups {
		a.handle("GET /openapi/v3/"+g.path, AccessRead, func(w http.ResponseWriter, r *http.Request) {
			if err := build(); err != nil {
				WriteError(w, err)
				return
			}
			writeRaw(w, o.docs[g.path])
		})
	}
}

func writeRaw(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-cache, private")
	_, _ = w.Write(b)
}

func (a *API) buildOpenAPI() ([]byte, map[string][]byte, error) {
	docs := map[string][]byte{}
	paths := map[string]any{}
	for _, g := range openAPIGroups {
		doc, err := json.Marshal(a.openAPIDocument(g.groupVersion))
		if err != nil {
			return nil, nil, err
		}
		docs[g.path] = doc
		sum := sha512.Sum512(doc)
		paths[g.path] = map[string]string{"serverRelativeURL": fmt.Sprintf("/openapi/v3/%s?hash=%X", g.path, sum)}
	}
	index, err := json.Marshal(map[string]any{"paths": paths})
	return index, docs, err
}

// openAPIDocument is the OpenAPI v3 document of groupVersion: the schemas
// of its kinds (x-kubernetes-group-version-kind on each top-level one) and
// an operation per served route. PATCH, POST and PUT declare the
// fieldValidation parameter, which kubectl looks for to leave validation
// to the server, and PATCH its patch types, strategic merge included,
// which kubectl apply looks for to compute its patch from the schema.
func (a *API) openAPIDocument(groupVersion string) map[string]any {
	gv, _ := schema.ParseGroupVersion(groupVersion)
	g := newSchemaGen()
	for _, t := range []any{PodMetrics{}, NodeMetrics{}, ContainerMetrics{}, PodMetricsList{}, NodeMetricsList{}} {
		rt := reflect.TypeOf(t)
		g.names[rt] = "io.k8s.metrics.pkg.apis.metrics.v1beta1." + rt.Name()
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
	for _, res := range a.resources {
		if res.apiVersion != groupVersion {
			continue
		}
		obj := topLevel(reflect.ValueOf(res.zero()).Elem().Interface(), gvk(res.kind))
		list := topLevel(listTypes[res.listKind], gvk(res.listKind))
		o := opBuilder{kind: res.kind, gvk: gvk(res.kind), tag: strings.NewReplacer(".", "_", "/", "_").Replace(strings.TrimPrefix(groupVersion, "/")),
			status: status}
		if gv.Group == "" {
			o.tag = "core_" + gv.Version
		}
		coll, item := prefix+"/"+res.name, prefix+"/"+res.name+"/{name}"
		if res.namespaced {
			paths[coll] = map[string]any{"get": o.op("list", res.listKind+"ForAllNamespaces", list, nil, false)}
			coll, item = prefix+"/namespaces/{namespace}/"+res.name, prefix+"/namespaces/{namespace}/"+res.name+"/{name}"
		}
		verbs := a.verbsOf(prefix, res.name, res.namespaced, "")
		collOps, itemOps := map[string]any{}, map[string]any{}
		for _, verb := range verbs {
			switch verb {
			case "list":
				collOps["get"] = o.op("list", res.listKind, list, nil, false)
			case "create":
				collOps["post"] = o.op("post", res.kind, obj, obj, true)
			case "deletecollection":
				collOps["delete"] = o.op("deletecollection", res.kind, status, deleteOptions, false)
			}
		}
		for _, verb := range verbs {
			switch verb {
			case "get":
				itemOps["get"] = o.op("get", res.kind, obj, nil, false)
			case "update":
				itemOps["put"] = o.op("put", res.kind, obj, obj, true)
			case "patch":
				itemOps["patch"] = o.op("patch", res.kind, obj, "", true)
			case "delete":
				itemOps["delete"] = o.op("delete", res.kind, obj, deleteOptions, false)
			}
		}
		if len(collOps) > 0 {
			collOps["parameters"] = pathParams(res.namespaced, false)
			paths[coll] = collOps
		}
		if len(itemOps) > 0 {
			itemOps["parameters"] = pathParams(res.namespaced, true)
			paths[item] = itemOps
		}
		if res.name == "pods" && gv.Group == "" {
			if verbs := a.verbsOf(prefix, "pods", true, "status"); len(verbs) > 0 {
				paths[item+"/status"] = map[string]any{"get": o.op("get", "PodStatus", obj, nil, false),
					"parameters": pathParams(true, true)}
			}
		}
	}
	return map[string]any{
		"openapi": "3.0.0",
		"info":    map[string]string{"title": "berth", "version": a.versionInfo().GitVersion},
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
