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

	"github.com/berth-dev/berth/kubeapi/registry"
	"github.com/berth-dev/berth/model"
)

// matcher selects the entries a request sees: its namespace, its token's
// scope, its label and field selectors.
type matcher struct {
	ns     string
	labels labels.Selector
	fields fields.Selector
	res    *registry.Kind
	// visible reports whether the request's token may see source's
	// objects.
	visible func(source string) bool
}

func (m *matcher) match(e *registry.Entry) bool {
	if !m.inScope(e) {
		return false
	}
	if !m.labels.Matches(labels.Set(e.Obj.GetLabels())) {
		return false
	}
	return m.fields.Empty() || m.fields.Matches(m.fieldSet(e))
}

// inScope reports whether e is in the request's namespace and its token's
// view: what no change of the object alters (another source's object at
// its key is another object).
func (m *matcher) inScope(e *registry.Entry) bool {
	if e == nil {
		return false
	}
	if m.ns != "" && e.Obj.GetNamespace() != m.ns {
		return false
	}
	return e.Source == "" || m.visible(e.Source)
}

func (m *matcher) fieldSet(e *registry.Entry) fields.Set {
	set := registry.MetadataFields(e.Obj)
	if m.res.Fields != nil {
		for k, v := range m.res.Fields(e.Obj) {
			set[k] = v
		}
	}
	return set
}

// newMatcher parses the request's selectors: a syntax error or a field
// the kind does not support is a 400 BadRequest, as the apiserver answers.
func (a *API) newMatcher(r *http.Request, res *registry.Kind) (*matcher, error) {
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
		supported := m.fieldSet(registry.ZeroEntry(res.Zero()))
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
func (a *API) serveList(res *registry.Kind) http.HandlerFunc {
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
		entries, rev, err := res.Versions.List(r.Context(), nil)
		if err != nil {
			WriteError(w, err)
			return
		}
		var sel []*registry.Entry
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
			raw, err := json.Marshal(e.Obj)
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
		}{TypeMeta: metav1.TypeMeta{APIVersion: res.APIVersion, Kind: res.ListKind}, Metadata: metav1.ListMeta{ResourceVersion: rv}, Items: items})
	}
}

// serveGet answers GET of one object (or its one-row Table).
func (a *API) serveGet(res *registry.Kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		e, err := a.getEntry(r, res, r.PathValue("name"))
		if err != nil {
			WriteError(w, err)
			return
		}
		if tv, ok := tableVersion(r); ok {
			t, err := a.table(r, res, []*registry.Entry{e}, true)
			if err != nil {
				WriteError(w, err)
				return
			}
			t.APIVersion, t.ResourceVersion = tv, e.Obj.GetResourceVersion()
			writeObject(w, http.StatusOK, t)
			return
		}
		writeObject(w, http.StatusOK, e.Obj)
	}
}

// getEntry returns the named object of the request's namespace, or a
// NotFound error (also for one the token may not see).
func (a *API) getEntry(r *http.Request, res *registry.Kind, name string) (*registry.Entry, error) {
	key := name
	if res.Namespaced {
		key = r.PathValue("ns") + "/" + name
	}
	e, err := res.Versions.Get(r.Context(), key)
	if err != nil {
		return nil, err
	}
	if e != nil && (e.Source == "" || a.o.Visible(r, &model.Pod{Source: e.Source})) {
		return e, nil
	}
	gv, _ := schema.ParseGroupVersion(res.APIVersion)
	return nil, notFound(gv.Group, res.Name, name)
}

// writeObject answers v as JSON with code.
func writeObject(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
