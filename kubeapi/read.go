package kubeapi

import "github.com/berth-dev/berth/kubeapi/registry"

// addReads adds the read routes: discovery, and get, list and watch of
// every registered kind (pods, events, the node, ConfigMaps, Secrets,
// claims, namespaces, metrics.k8s.io, the node's lease), and a pod's
// status.
func (a *API) addReads() {
	a.discoveryRoutes()
	for _, kind := range a.reg.Kinds() {
		a.addResource(kind)
		if kind.Name == "pods" && kind.APIVersion == "v1" {
			a.handle("GET /api/v1/namespaces/{ns}/pods/{name}/status", AccessRead, a.serveGet(kind))
		}
	}
	a.openAPIRoutes()
}

// addResource serves kind's collection (all namespaces, and one namespace
// when namespaced) and its objects; push-scoped requests get kind.Push
// instead, when set.
func (a *API) addResource(kind *registry.Kind) {
	prefix := "/api/" + kind.APIVersion
	if kind.APIVersion != "v1" {
		prefix = "/apis/" + kind.APIVersion
	}
	list, get := a.serveList(kind), a.serveGet(kind)
	if p := kind.Push; p != nil {
		list, get = a.byScope(list, a.serveList(p)), a.byScope(get, a.serveGet(p))
	}
	a.handle("GET "+prefix+"/"+kind.Name, AccessRead, list)
	if kind.Namespaced {
		a.handle("GET "+prefix+"/namespaces/{ns}/"+kind.Name, AccessRead, list)
		a.handle("GET "+prefix+"/namespaces/{ns}/"+kind.Name+"/{name}", AccessRead, get)
		return
	}
	a.handle("GET "+prefix+"/"+kind.Name+"/{name}", AccessRead, get)
}
