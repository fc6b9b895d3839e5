package kubeapi

import (
	"net/http"
	"reflect"
	"strings"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/berth-dev/berth/kubeapi/openapi"
	"github.com/berth-dev/berth/kubeapi/registry"
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
	"LeaseList": coordinationv1.LeaseList{}, "PodMetricsList": registry.PodMetricsList{}, "NodeMetricsList": registry.NodeMetricsList{},
}

// openAPIDocs holds the documents, built once at the first request, when
// every route is added.
type openAPIDocs struct {
	once  sync.Once
	index []byte
	docs  map[string][]byte
	err   error
}

// openAPIRoutes serves GET /openapi/v3 (the index of group versions, each
// with its serverRelativeURL carrying the document's hash, as client-go
// caches by it) and the document of each group version (package openapi
// builds them), and GET /openapi/v2, the legacy document kubectl reads
// when v3 describes no PATCH of a document's kind (a kind berth does not
// serve): it describes no kind, so kubectl validates such a document no
// further and its own "no matches for kind" reports it.
func (a *API) openAPIRoutes() {
	o := &openAPIDocs{}
	build := func() error {
		o.once.Do(func() { o.index, o.docs, o.err = openapi.Build(a.openAPISpec()) })
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
	a.handle("GET /openapi/v2", AccessRead, func(w http.ResponseWriter, r *http.Request) {
		proto := strings.Contains(r.Header.Get("Accept"), "protobuf")
		doc, ctype, err := openapi.LegacyDocument(a.versionInfo().GitVersion, proto)
		if err != nil {
			WriteError(w, err)
			return
		}
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-cache, private")
		_, _ = w.Write(doc)
	})
}

func writeRaw(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-cache, private")
	_, _ = w.Write(b)
}

// openAPISpec describes the served kinds and the verbs their routes serve
// now, for openapi.Build.
func (a *API) openAPISpec() openapi.Spec {
	s := openapi.Spec{Version: a.versionInfo().GitVersion, Names: map[reflect.Type]string{}}
	for _, t := range []any{registry.PodMetrics{}, registry.NodeMetrics{}, registry.ContainerMetrics{}, registry.PodMetricsList{}, registry.NodeMetricsList{}} {
		rt := reflect.TypeOf(t)
		s.Names[rt] = "io.k8s.metrics.pkg.apis.metrics.v1beta1." + rt.Name()
	}
	for _, g := range openAPIGroups {
		gv, _ := schema.ParseGroupVersion(g.groupVersion)
		prefix := "/api/v1"
		if gv.Group != "" {
			prefix = "/apis/" + g.groupVersion
		}
		grp := openapi.Group{Path: g.path, GroupVersion: g.groupVersion}
		for _, res := range a.reg.Kinds() {
			if res.APIVersion != g.groupVersion {
				continue
			}
			grp.Resources = append(grp.Resources, openapi.Resource{
				Name: res.Name, Kind: res.Kind, ListKind: res.ListKind, Namespaced: res.Namespaced,
				Object: reflect.ValueOf(res.Zero()).Elem().Interface(), List: listTypes[res.ListKind],
				Verbs:  a.verbsOf(prefix, res.Name, res.Namespaced, ""),
				Status: res.Name == "pods" && gv.Group == "" && len(a.verbsOf(prefix, "pods", true, "status")) > 0,
			})
		}
		s.Groups = append(s.Groups, grp)
	}
	return s
}
