package kubeapi

import (
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RefuseWrites answers the write routes of AddWrites with 405
// MethodNotAllowed naming why (e.g. that the push source is off), instead
// of the 404 kubectl would print as "the server could not find the
// requested resource". Discovery keeps listing the kinds read-only. Adding
// both RefuseWrites and AddWrites is a misuse (the patterns collide).
func (a *API) RefuseWrites(why string) {
	for _, k := range a.writeKinds() {
		coll := "/api/v1/namespaces/{ns}/" + k.resource
		for _, pattern := range []string{"POST " + coll, "PUT " + coll + "/{name}", "PATCH " + coll + "/{name}", "DELETE " + coll + "/{name}"} {
			resource := k.resource
			a.routes = append(a.routes, Route{Pattern: pattern, Access: AccessRead, refusal: true,
				Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					WriteStatus(w, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed,
						fmt.Sprintf("%s cannot be changed through this berth: %s", resource, why))
				})})
		}
	}
}
