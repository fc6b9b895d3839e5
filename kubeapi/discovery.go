package kubeapi

import (
	"net/http"
	"regexp"
	"runtime"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/berth-dev/berth/internal/kubeversion"
	"github.com/berth-dev/berth/kubeapi/registry"
)

// MetricsGroupVersion is the served version of metrics.k8s.io.
const MetricsGroupVersion = registry.MetricsGroupVersion

var notSemverBuild = regexp.MustCompile(`[^0-9A-Za-z.-]+`)

// versionInfo is /version: the Kubernetes release of the API berth's
// client libraries speak (k8s.io/apimachinery v0.37.2 → v1.37.2), so
// kubectl of the same minor sees no version skew, with berth's version as
// build metadata: v1.37.2-berth+<berth version>.
func (a *API) versionInfo() version.Info {
	rel := kubeversion.Get()
	build := notSemverBuild.ReplaceAllString(strings.TrimPrefix(a.o.Version, "v"), "-")
	if build == "" {
		build = "unknown"
	}
	return version.Info{
		Major: rel.Major, Minor: rel.Minor, GitVersion: rel.GitVersion() + "-berth+" + build,
		GitTreeState: "clean", GoVersion: runtime.Version(), Compiler: runtime.Compiler,
		Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// discoveryRoutes adds /version, /api, /api/v1, /apis and the
// discovery of the other groups (coordination.k8s.io, metrics.k8s.io). Served plainly as JSON: client-go asks
// for the aggregated discovery first and falls back to these.
func (a *API) discoveryRoutes() {
	a.handle("GET /version", AccessRead, func(w http.ResponseWriter, r *http.Request) {
		writeObject(w, http.StatusOK, a.versionInfo())
	})
	a.handle("GET /api", AccessRead, func(w http.ResponseWriter, r *http.Request) {
		writeObject(w, http.StatusOK, metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}}})
	})
	a.handle("GET /api/v1", AccessRead, func(w http.ResponseWriter, r *http.Request) {
		writeObject(w, http.StatusOK, a.resourceList("v1"))
	})
	var groups []metav1.APIGroup
	for _, gvs := range servedGroups {
		gv, _ := schema.ParseGroupVersion(gvs)
		g := metav1.APIGroup{Name: gv.Group,
			Versions:         []metav1.GroupVersionForDiscovery{{GroupVersion: gvs, Version: gv.Version}},
			PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: gvs, Version: gv.Version}}
		groups = append(groups, g)
		g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		a.handle("GET /apis/"+gv.Group, AccessRead, func(w http.ResponseWriter, r *http.Request) {
			writeObject(w, http.StatusOK, g)
		})
		a.handle("GET /apis/"+gvs, AccessRead, func(w http.ResponseWriter, r *http.Request) {
			writeObject(w, http.StatusOK, a.resourceList(gvs))
		})
	}
	a.handle("GET /apis", AccessRead, func(w http.ResponseWriter, r *http.Request) {
		writeObject(w, http.StatusOK, metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: groups})
	})
}

// servedGroups are the group versions served beside the core v1.
var servedGroups = []string{LeaseGroupVersion, MetricsGroupVersion}

// resourceList is the APIResourceList of groupVersion: its resources and
// the subresources some route serves, each with the verbs of the routes
// added so far (the write and stream parts add theirs).
func (a *API) resourceList(groupVersion string) metav1.APIResourceList {
	out := metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: groupVersion,
		APIResources: []metav1.APIResource{}}
	prefix := "/api/v1"
	if groupVersion != "v1" {
		prefix = "/apis/" + groupVersion
	}
	for _, res := range a.reg.Kinds() {
		if res.APIVersion != groupVersion {
			continue
		}
		ar := metav1.APIResource{Name: res.Name, SingularName: res.Singular, Namespaced: res.Namespaced, Kind: res.Kind,
			ShortNames: res.ShortNames, Verbs: a.verbsOf(prefix, res.Name, res.Namespaced, "")}
		if res.Name == "pods" && groupVersion == "v1" {
			ar.Categories = []string{"all"}
		}
		out.APIResources = append(out.APIResources, ar)
		for _, sub := range subresources[res.Name] {
			verbs := a.verbsOf(prefix, res.Name, res.Namespaced, sub.name)
			if len(verbs) == 0 {
				continue
			}
			out.APIResources = append(out.APIResources, metav1.APIResource{Name: res.Name + "/" + sub.name, Namespaced: res.Namespaced,
				Kind: sub.kind, Group: sub.group, Version: sub.version, Verbs: verbs})
		}
	}
	return out
}

// subresource is a subresource discovery lists when a route serves it.
type subresource struct{ name, group, version, kind string }

var subresources = map[string][]subresource{
	"pods": {{name: "status", kind: "Pod"}, {name: "log", kind: "Pod"}, {name: "exec", kind: "PodExecOptions"},
		{name: "attach", kind: "PodAttachOptions"}, {name: "portforward", kind: "PodPortForwardOptions"},
		{name: "eviction", group: "policy", version: "v1", kind: "Eviction"}, {name: "ephemeralcontainers", kind: "Pod"}},
	"nodes": {{name: "proxy", kind: "NodeProxyOptions"}, {name: "status", kind: "Node"}},
}

var wildcard = regexp.MustCompile(`\{[^}]*\}`)

// verbsOf derives the verbs of a resource (sub "") or subresource from the
// routes: GET of the collection is list and watch, of an object get;
// POST create, PUT update, PATCH patch, DELETE delete (deletecollection on
// the collection). Subresources that stream (exec, attach, portforward)
// are get and create as in the apiserver.
func (a *API) verbsOf(prefix, name string, namespaced bool, sub string) []string {
	coll := prefix + "/" + name
	if namespaced {
		coll = prefix + "/namespaces/{}/" + name
	}
	obj := coll + "/{}"
	if sub != "" {
		obj += "/" + sub
	}
	has := map[string]bool{}
	for _, rt := range a.routes {
		if rt.refusal {
			continue
		}
		method, path, ok := strings.Cut(rt.Pattern, " ")
		if !ok {
			method, path = "", rt.Pattern // every method: a stream's GET and POST
		}
		path = strings.TrimSuffix(wildcard.ReplaceAllString(path, "{}"), "/{}...")
		switch {
		case sub == "" && path == coll:
			switch method {
			case http.MethodGet:
				has["list"], has["watch"] = true, true
			case http.MethodPost:
				has["create"] = true
			case http.MethodDelete:
				has["deletecollection"] = true
			}
		case path == obj || (sub == "proxy" && strings.HasPrefix(path, obj)):
			switch method {
			case "":
				has["get"], has["create"] = true, true
			case http.MethodGet:
				has["get"] = true
			case http.MethodPost:
				has["create"] = true
			case http.MethodPut:
				has["update"] = true
			case http.MethodPatch:
				has["patch"] = true
			case http.MethodDelete:
				has["delete"] = true
			}
		}
	}
	var out []string
	for _, v := range []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"} {
		if has[v] {
			out = append(out, v)
		}
	}
	return out
}
