package kubeapi

// addReads adds the read routes: discovery, pods, events, the node,
// ConfigMaps, Secrets, claims and metrics.k8s.io.
func (a *API) addReads() {
	a.discoveryRoutes()
	for _, res := range []*resource{a.podsResource(), a.eventsResource(), a.nodesResource(),
		a.configMapsResource(), a.secretsResource(), a.claimsResource(), a.namespacesResource()} {
		a.addResource("/api/v1", res)
	}
	a.handle("GET /api/v1/namespaces/{ns}/pods/{name}/status", AccessRead, a.serveGet(a.resource("pods")))
	a.metricsRoutes()
	a.addResource("/apis/"+LeaseGroupVersion, a.leasesResource())
	a.openAPIRoutes()
}

// addResource serves res's collection (all namespaces, and one namespace
// when namespaced) and its objects under prefix; push-scoped requests get
// res.push instead, when set.
func (a *API) addResource(prefix string, res *resource) {
	a.track(res)
	a.resources = append(a.resources, res)
	list, get := a.serveList(res), a.serveGet(res)
	if p := res.push; p != nil {
		a.track(p)
		list, get = a.byScope(list, a.serveList(p)), a.byScope(get, a.serveGet(p))
	}
	a.handle("GET "+prefix+"/"+res.name, AccessRead, list)
	if res.namespaced {
		a.handle("GET "+prefix+"/namespaces/{ns}/"+res.name, AccessRead, list)
		a.handle("GET "+prefix+"/namespaces/{ns}/"+res.name+"/{name}", AccessRead, get)
		return
	}
	a.handle("GET "+prefix+"/"+res.name+"/{name}", AccessRead, get)
}

// track gives res its versions: the store's for a kind it holds, else a
// tracker on the API's one revision counter.
func (a *API) track(res *resource) {
	if res.stored != nil && a.o.Store != nil {
		res.v = newStoreVersions(a.o.Store, *res.stored)
		return
	}
	res.tr = newTracker(a.rev)
	res.tr.gone = res.gone
	res.v = trackerVersions{res}
}

// resource returns the served resource of name in the core group.
func (a *API) resource(name string) *resource {
	for _, r := range a.resources {
		if r.name == name && r.apiVersion == "v1" {
			return r
		}
	}
	return nil
}
