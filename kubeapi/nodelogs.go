package kubeapi

import (
	"net/http"

	"github.com/berth-dev/berth/kubeapi/nodelogs"
)

// AddNodeLogs serves dir (nodelogs.Handler) as the node's proxy/logs
// subresource, GET /api/v1/nodes/{node}/proxy/logs/{path...}, to admin
// tokens only (AccessNodeLogs), as kubectl get --raw reaches the kubelet's;
// another node's name is a 404 Status.
func (a *API) AddNodeLogs(dir string) {
	logs := nodelogs.Handler(dir)
	a.handle("GET /api/v1/nodes/{node}/proxy/logs/{path...}", AccessNodeLogs, func(w http.ResponseWriter, r *http.Request) {
		if n := r.PathValue("node"); n != a.o.Node {
			WriteError(w, notFound("", "nodes", n))
			return
		}
		logs.ServeHTTP(w, r)
	})
}
