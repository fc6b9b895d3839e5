package kubeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/berth-dev/berth/model"
)

// matcher selects the entries a request sees: its namespace, its token's
// scope, its label and field selectors.
type matcher struct {
	ns     string
	labels labels.Selector
	fields fields.Selector
	res    *resource
	// visible reports whether the request's token may see source's
	// objects.
	visible func(source string) bool
}

func (m *matcher) match(e *entry) bool {
	if e == nil {
		return false
	}
	if m.ns != "" && e.obj.GetNamespace() != m.ns {
		return false
	}
	if e.source != "" && !m.visible(e.source) {
		return false
	}
	if !m.labels.Matches(labels.Set(e.obj.GetLabels())) {
		return false
	}
	return m.fields.Empty() || m.fields.Matches(m.fieldSet(e))
}

func (m *matcher) fieldSet(e *entry) fields.Set {
	set := metadataFields(e.obj)
	if m.res.fields != nil {
		for k, v := range m.res.fields(e.obj) {
			set[k] = v
		}
	}
	return set
}

// newMatcher parses the request's selectors: a syntax error or a field
// the kind does not support is a 400 BadRequest, as the apiserver answers.
func (a *API) newMatcher(r *http.Request, res *resource) (*matcher, error) {
	q := r.URL.Query()
	m := &matcher{ns: r.PathValue("ns"), res: res, labels: labels.Everything(), fields: fields.Everything()}
	m.visible = func(source string) bool { return a.o.Visible(r, &model.Pod{Source: source}) }
	if s := q.Get("labelSelector"); s != "" {
		sel, err := labels.Parse(s)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
		}
		m.labels = sel
	}
	if s := q.Get("fieldSelector"); s != "" {
		sel, err := fields.ParseSelector(s)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		supported := m.fieldSet(&entry{item: item{obj: res.zero()}})
		for _, req := range sel.Requirements() {
			if _, ok := supported[req.Field]; !ok {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
			}
		}
		m.fields = sel
	}
	return m, nil
}

// serveList answers GET of a collection: a watch with ?watch=true, else
// the list (or its Table).
func (a *API) serveList(res *resource) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m, err := a.newMatcher(r, res)
		if err != nil {
			WriteError(w, err)
			return
		}
		if watch, _ := strconv.ParseBool(r.URL.Query().Get("watch")); watch {
			a.serveWatch(w, r, res, m)
			return
		}
		entries, rev, err := res.v.list(r.Context(), nil)
		if err != nil {
			WriteError(w, err)
			return
		}
		var sel []*entry
		for _, e := range entries {
			if m.match(e) {
				sel = append(sel, e)
			}
		}
		rv := strconv.FormatUint(rev, 10)
		if tv, ok := tableVersion(r); ok {
			t, err := a.table(r, res, sel, true)
			if err != nil {
				WriteError(w, err)
				return
			}
			t.APIVersion, t.ResourceVersion = tv, rv
			writeObject(w, http.StatusOK, t)
			return
		}
		items := make([]json.RawMessage, 0, len(sel))
		for _, e := range sel {
			raw, err := json.Marshal(e.obj)
			if err != nil {
				WriteError(w, err)
				return
			}
			items = append(items, raw)
		}
		writeObject(w, http.StatusOK, struct {
			metav1.TypeMeta `json:",inline"`
			Metadata        metav1.ListMeta   `json:"metadata"`
			Items           []json.RawMessage `json:"items"`
		}{TypeMeta: metav1.TypeMeta{APIVersion: res.apiVersion, Kind: res.listKind}, Metadata: metav1.ListMeta{ResourceVersion: rv}, Items: items})
	}
}

// serveGet answers GET of one object (or its one-row Table).
func (a *API) serveGet(res *resource) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		e, err := a.getEntry(r, res, r.PathValue("name"))
		if err != nil {
			WriteError(w, err)
			return
		}
		if tv, ok := tableVersion(r); ok {
			t, err := a.table(r, res, []*entry{e}, true)
			if err != nil {
				WriteError(w, err)
				return
			}
			t.APIVersion, t.ResourceVersion = tv, e.obj.GetResourceVersion()
			writeObject(w, http.StatusOK, t)
			return
		}
		writeObject(w, http.StatusOK, e.obj)
	}
}

// getEntry returns the named object of the request's namespace, or a
// NotFound error (also for one the token may not see).
func (a *API) getEntry(r *http.Request, res *resource, name string) (*entry, error) {
	key := name
	if res.namespaced {
		key = r.PathValue("ns") + "/" + name
	}
	e, err := res.v.get(r.Context(), key)
	if err != nil {
		return nil, err
	}
	if e != nil && (e.source == "" || a.o.Visible(r, &model.Pod{Source: e.source})) {
		return e, nil
	}
	gv, _ := schema.ParseGroupVersion(res.apiVersion)
	return nil, notFound(gv.Group, res.name, name)
}

// writeObject answers v as JSON with code.
func writeObject(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
