package kubeapi

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
func (a *API) table(r *http.Request, res *resource, entries []*entry, headers bool) (*metav1.Table, error) {
	include := metav1.IncludeObjectPolicy(r.URL.Query().Get("includeObject"))
	switch include {
	case "":
		include = metav1.IncludeMetadata
	case metav1.IncludeMetadata, metav1.IncludeObject, metav1.IncludeNone:
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("includeObject: unsupported value %q", include))
	}
	t := &metav1.Table{TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"}, Rows: []metav1.TableRow{}}
	if headers {
		t.ColumnDefinitions = res.columns
	}
	now := a.o.Clock.Now()
	for _, e := range entries {
		row, err := tableRow(e.obj, res.cells, now, include)
		if err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// tableRow is o's row: its cells, and its object as include asks.
func tableRow(o object, cells func(runtime.Object, time.Time) ([]any, []metav1.TableRowCondition), now time.Time, include metav1.IncludeObjectPolicy) (metav1.TableRow, error) {
	c, conds := cells(o, now)
	row := metav1.TableRow{Cells: c, Conditions: conds}
	var obj runtime.Object
	switch include {
	case metav1.IncludeMetadata:
		m := &metav1.PartialObjectMetadata{ObjectMeta: *metaOf(o)}
		m.APIVersion, m.Kind = "meta.k8s.io/v1", "PartialObjectMetadata"
		obj = m
	case metav1.IncludeObject:
		obj = o
	}
	if obj != nil {
		raw, err := json.Marshal(obj)
		if err != nil {
			return row, err
		}
		row.Object = runtime.RawExtension{Raw: raw}
	}
	return row, nil
}

// metaOf returns o's ObjectMeta (a copy).
func metaOf(o object) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{
		Name: o.GetName(), Namespace: o.GetNamespace(), UID: o.GetUID(), ResourceVersion: o.GetResourceVersion(),
		Generation: o.GetGeneration(), CreationTimestamp: o.GetCreationTimestamp(), DeletionTimestamp: o.GetDeletionTimestamp(),
		DeletionGracePeriodSeconds: o.GetDeletionGracePeriodSeconds(), Labels: o.GetLabels(), Annotations: o.GetAnnotations(),
		OwnerReferences: o.GetOwnerReferences(), Finalizers: o.GetFinalizers(),
	}
}
