// Package server is berth's HTTP API: health, metrics and the pod list, on
// one port, with bearer-token protection for everything but health and
// metrics: admin tokens open everything, push tokens the push source's
// pods only (see scope).
package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/podview"
	"github.com/berth-dev/berth/store"
)

// Checker reports a readiness problem, or nil when ready.
type Checker func(ctx context.Context) error

// Options configure the API server.
type Options struct {
	Store    *store.Store
	Registry *prometheus.Registry
	// Ready checks are all run by /readyz.
	Ready []Checker
	// Tokens are the admin tokens (server.token_file), accepted as
	// "Authorization: Bearer <token>" on every route. Empty: the routes
	// other than the push source's and exec need no token (see scope).
	Tokens []string
	// PushTokens (sources.push.token_file) may only create, update, delete
	// and read the push source's pods; a token in both lists is an admin's.
	PushTokens []string
	// Events lists recent events, each once with its repeats, oldest
	// first (nil: /events is empty).
	Events func() []events.Occurred
	// Node is the node's name, the spec.nodeName of every served pod.
	Node string
	// Address is server.address: without Tokens, the server answers only
	// requests whose Host names localhost, a loopback IP or Address.
	Address string
	// Clock times the watch: its coalescing and the deletionTimestamp of
	// DELETED (nil: the real clock).
	Clock clock.Clock
	// MaxWatches caps the requests held open at once (watches of /pods
	// and of the Kubernetes API, log reads) and MaxWatchesPerToken those
	// of one token (requests without a known token count as one); over a
	// cap the answer is 429 (server.max_watches,
	// server.max_watches_per_token). Zero: no cap.
	MaxWatches, MaxWatchesPerToken int
	// MaxMutatingRequests caps the other requests that change state
	// (POST, PUT, PATCH, DELETE; exec, attach and port-forward aside) in
	// flight at once, MaxMutatingRequestsPerToken those of one token, as
	// MaxWatches does (server.max_mutating_requests,
	// server.max_mutating_requests_per_token). Zero: no cap.
	MaxMutatingRequests, MaxMutatingRequestsPerToken int
}

// Server serves the API; build with New, serve with http.Server{Handler: s}.
type Server struct {
	opts Options
	mux  *patternMux
	// pushSource names the source whose pods push tokens see (set by
	// RegisterPush; empty: they see none).
	pushSource string
	// watches holds the slots of the requests held open, mutating those of
	// the requests that change state (nil: no cap).
	watches, mutating *inflightLimit
}

// New returns the API handler.
func New(o Options) *Server {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	s := &Server{opts: o, mux: newPatternMux()}
	if o.MaxWatches > 0 || o.MaxWatchesPerToken > 0 {
		s.watches = newWatchLimit(o.MaxWatches, o.MaxWatchesPerToken)
	}
	if o.MaxMutatingRequests > 0 || o.MaxMutatingRequestsPerToken > 0 {
		s.mutating = newMutatingLimit(o.MaxMutatingRequests, o.MaxMutatingRequestsPerToken)
	}
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	s.mux.HandleFunc("GET /readyz", s.readyz)
	if o.Registry != nil {
		s.mux.Handle("GET /metrics", promhttp.HandlerFor(o.Registry, promhttp.HandlerOpts{Registry: o.Registry}))
	}
	s.handle("GET /pods", accessPods, http.HandlerFunc(s.listPods))
	s.handle("GET /pods/{ns}/{name}", accessPods, http.HandlerFunc(s.getPod))
	s.Handle("GET /events", http.HandlerFunc(s.listEvents))
	return s
}

// Handle registers an extra handler that needs the admin scope.
func (s *Server) Handle(pattern string, h http.Handler) { s.handle(pattern, accessAdmin, h) }

func (s *Server) handle(pattern string, a access, h http.Handler) {
	s.mux.Handle(pattern, s.guard(a, logRoute(pattern), h))
}

// MaxPushBody caps request bodies of the push routes at the server, beside
// the push source's own, smaller limit.
const MaxPushBody = 2 << 20

// RegisterPush serves the routes (ServeMux pattern → handler) of the push
// source named source, with bodies capped at MaxPushBody. They need a push
// or an admin token, never none; push tokens read source's pods only.
func RegisterPush(s *Server, source string, routes map[string]http.Handler) {
	s.pushSource = source
	for pattern, h := range routes {
		s.handle(pattern, accessPush, http.MaxBytesHandler(h, MaxPushBody))
	}
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.hostGuard(w, r) {
		s.mux.ServeHTTP(w, r)
	}
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	var problems []string
	for _, check := range s.opts.Ready {
		if err := check(ctx); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		http.Error(w, "not ready: "+strings.Join(problems, "; "), http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ok")
}

func writeJSON(w http.ResponseWriter, v interface{}) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func (s *Server) listPods(w http.ResponseWriter, r *http.Request) {
	if s.serveWatch(w, r) {
		return
	}
	pods, err := s.opts.Store.Pods(nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	list := v1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Items: []v1.Pod{}}
	for _, p := range pods {
		if s.visible(r, p) {
			list.Items = append(list.Items, podview.Pod(p, s.opts.Node))
		}
	}
	sort.Slice(list.Items, func(i, j int) bool {
		a, b := list.Items[i], list.Items[j]
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	writeJSON(w, list)
}

func (s *Server) getPod(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("ns") + "/" + r.PathValue("name")
	p, err := s.opts.Store.Pod(nil, key)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if p == nil || !s.visible(r, p) {
		http.Error(w, fmt.Sprintf("pod %s not found", key), http.StatusNotFound)
		return
	}
	writeJSON(w, podview.Pod(p, s.opts.Node))
}

// SourcesSynced is a readiness check: every registered source has synced.
func SourcesSynced(st *store.Store) Checker {
	return func(ctx context.Context) error {
		srcs, err := st.Sources(nil)
		if err != nil {
			return err
		}
		var waiting []string
		for _, s := range srcs {
			if !s.Synced {
				waiting = append(waiting, s.Name)
			}
		}
		if len(waiting) > 0 {
			return fmt.Errorf("sources not synced: %s", strings.Join(waiting, ", "))
		}
		return nil
	}
}

// Limits bound what one client can hold: a slow client is cut off after
// ReadHeader (headers) or Read (whole request); headers are capped.
type Limits struct {
	ReadHeader  time.Duration
	Read        time.Duration
	Idle        time.Duration
	HeaderBytes int
}

// DefaultLimits are berth's API limits. There is no write timeout, so that
// followed logs can stream; request bodies are capped per handler.
var DefaultLimits = Limits{ReadHeader: 10 * time.Second, Read: 30 * time.Second, Idle: 120 * time.Second, HeaderBytes: 64 << 10}

// HTTPServer wraps h with the limits berth always uses.
func HTTPServer(addr string, h http.Handler) *http.Server {
	return httpServer(addr, h, DefaultLimits)
}

func httpServer(addr string, h http.Handler, l Limits) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeader,
		ReadTimeout:       l.Read,
		IdleTimeout:       l.Idle,
		MaxHeaderBytes:    l.HeaderBytes,
	}
}

// listEvents answers the recent events, each once with its count and last
// time, the first to occur first; ?namespace= and ?pod= filter.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) {
	out := []events.Occurred{}
	if s.opts.Events != nil {
		ns, pod := r.URL.Query().Get("namespace"), r.URL.Query().Get("pod")
		for _, e := range s.opts.Events() {
			if (ns == "" || e.Namespace == ns) && (pod == "" || e.Pod == pod) {
				out = append(out, e)
			}
		}
	}
	writeJSON(w, out)
}
