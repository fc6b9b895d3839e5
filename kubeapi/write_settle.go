package kubeapi

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
)

// settleTimeout bounds how long a write waits for the store to show it.
const settleTimeout = 5 * time.Second

// settle waits until the store shows the write of the kind's ns/name: obj
// stored by the push source, or (obj nil) no push object of that key. So a
// GET after a write's answer sees it, as with the apiserver. A refusal by
// admission (a host port another pod holds) ends the wait too and is
// returned, to be answered as a warning. After settleTimeout on the API's
// clock the write is answered anyway: it is persisted.
func (w *writer) settle(ctx context.Context, k writeKind, ns, name string, obj runtime.Object) string {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	timer := w.a.o.Clock.NewTimer(settleTimeout)
	defer timer.Stop()
	go func() {
		select {
		case <-timer.C():
			cancel()
		case <-ctx.Done():
		}
	}()
	key := ns + "/" + name
	for {
		ws := memdb.NewWatchSet()
		done, refusal := w.settled(ws, k, key, obj)
		if done || ws.WatchCtx(ctx) != nil {
			return refusal
		}
	}
}

func (w *writer) settled(ws memdb.WatchSet, k writeKind, key string, obj runtime.Object) (bool, string) {
	st := w.a.o.Store
	var cur runtime.Object
	var source string
	if k.kind == "Pod" {
		if p, err := st.Pod(ws, key); err == nil && p != nil {
			cur, source = p.Spec, p.Source
		}
	} else if o, err := st.Object(ws, k.kind, key); err == nil && o != nil {
		source = o.Source
		if o.ConfigMap != nil {
			cur = o.ConfigMap
		} else if o.Secret != nil {
			cur = o.Secret
		}
	}
	push := source == w.p.Name()
	if obj == nil {
		return !push, ""
	}
	if push && apiequality.Semantic.DeepEqual(cur, obj) {
		return true, ""
	}
	src, err := st.Source(ws, w.p.Name())
	if err != nil || src == nil {
		return false, ""
	}
	for _, e := range src.Errors {
		if strings.Contains(e, key+":") {
			return true, e
		}
	}
	return false, ""
}

// live returns the object as the API's GET serves it (resourceVersion
// included), or nil when the GET does not answer 200.
func (w *writer) live(r *http.Request, k writeKind, ns, name string) map[string]any {
	w.getOnce.Do(func() {
		w.get = http.NewServeMux()
		for _, rt := range w.a.routes {
			if strings.HasPrefix(rt.Pattern, http.MethodGet+" ") {
				w.get.Handle(rt.Pattern, rt.Handler)
			}
		}
	})
	g := r.Clone(r.Context())
	g.Method, g.Body, g.ContentLength = http.MethodGet, http.NoBody, 0
	g.URL = &url.URL{Path: "/api/v1/namespaces/" + ns + "/" + k.resource + "/" + name}
	g.RequestURI = g.URL.Path
	g.Header = r.Header.Clone()
	g.Header.Del("Accept")
	g.Header.Del("Content-Type")
	rec := &recorder{header: http.Header{}, code: http.StatusOK}
	w.get.ServeHTTP(rec, g)
	if rec.code != http.StatusOK {
		return nil
	}
	m, err := decodeMap(rec.body.Bytes())
	if err != nil {
		return nil
	}
	return m
}

// resourceVersionOf returns m's metadata.resourceVersion.
func resourceVersionOf(m map[string]any) string {
	md, _ := m["metadata"].(map[string]any)
	rv, _ := md["resourceVersion"].(string)
	return rv
}

// recorder keeps the answer of an internal GET.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(code int)        { r.code = code }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
