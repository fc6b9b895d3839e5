package kubeapi

import (
	"net/http"

	"github.com/berth-dev/berth/model"
)

// seesEverySource reports whether r's token sees every source's objects:
// Options.Visible lets it see a pod of no source. Push-scoped requests do
// not, and get the push view of the kinds that aggregate over sources.
func (a *API) seesEverySource(r *http.Request) bool {
	return a.o.Visible(r, &model.Pod{})
}

// byScope serves all to requests that see every source and push to the
// others.
func (a *API) byScope(all, push http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.seesEverySource(r) {
			all(w, r)
			return
		}
		push(w, r)
	}
}
