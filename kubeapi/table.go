package kubeapi

import (
	"fmt"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/kubeapi/printers"
	"github.com/berth-dev/berth/kubeapi/registry"
)

// tableVersion reports whether the request's Accept asks for a Table
// (as=Table;g=meta.k8s.io), and the apiVersion to answer it with: the
// first one the client lists (v1 or v1beta1, whose Table is the same).
func tableVersion(r *http.Request) (string, bool) {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		_, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || params["as"] != "Table" || params["g"] != "meta.k8s.io" {
			continue
		}
		switch params["v"] {
		case "v1", "v1beta1":
			return "meta.k8s.io/" + params["v"], true
		}
	}
	return "", false
}

// table prints entries as a Table of res with every column (kubectl hides
// those of priority 1 unless -o wide); headers false leaves out the
// column definitions (the watch events after the first). Each row's object
// is as ?includeObject= asks: Metadata (the default, a
// PartialObjectMetadata), Object or None.
func (a *API) table(r *http.Request, res *registry.Kind, entries []*registry.Entry, headers bool) (*metav1.Table, error) {
	include := metav1.IncludeObjectPolicy(r.URL.Query().Get("includeObject"))
	switch include {
	case "":
		include = metav1.IncludeMetadata
	case metav1.IncludeMetadata, metav1.IncludeObject, metav1.IncludeNone:
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("includeObject: unsupported value %q", include))
	}
	objs := make([]printers.Object, len(entries))
	for i, e := range entries {
		objs[i] = e.Obj
	}
	return printers.Table(objs, res.Columns, res.Cells, a.o.Clock.Now(), include, headers)
}
