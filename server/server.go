// Package server is berth's HTTP API: health, metrics and the pod list, on
// one port, with bearer-token protection for everything but health and
// metrics.
package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/model"
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
	// Tokens accepted as "Authorization: Bearer <token>"; empty: no auth.
	Tokens []string
	// Events lists recent events, oldest first (nil: /events is empty).
	Events func() []events.Event
	// Node is the node's name, the spec.nodeName of every served pod.
	Node string
}

// Server serves the API; build with New, serve with http.Server{Handler: s}.
type Server struct {
	opts Options
	mux  *http.ServeMux
}

// New returns the API handler.
func New(o Options) *Server {
	s := &Server{opts: o, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	s.mux.HandleFunc("GET /readyz", s.readyz)
	if o.Registry != nil {
		s.mux.Handle("GET /metrics", promhttp.HandlerFor(o.Registry, promhttp.HandlerOpts{Registry: o.Registry}))
	}
	s.mux.Handle("GET /pods", s.auth(http.HandlerFunc(s.listPods)))
	s.mux.Handle("GET /pods/{ns}/{name}", s.auth(http.HandlerFunc(s.getPod)))
	s.mux.Handle("GET /events", s.auth(http.HandlerFunc(s.listEvents)))
	return s
}

// Handle registers an extra authenticated handler (e.g. the push source).
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, s.auth(h)) }

// MaxPushBody caps request bodies of the push routes at the server, beside
// the push source's own, smaller limit.
const MaxPushBody = 2 << 20

// RegisterPush serves the push source's routes (ServeMux pattern → handler),
// authenticated and with bodies capped at MaxPushBody.
func RegisterPush(s *Server, routes map[string]http.Handler) {
	for pattern, h := range routes {
		s.Handle(pattern, http.MaxBytesHandler(h, MaxPushBody))
	}
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// LoadTokens reads one token per non-empty line of path.
func LoadTokens(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("server.token_file: %w", err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("server.token_file: no token in file")
	}
	return out, nil
}

func (s *Server) auth(h http.Handler) http.Handler {
	if len(s.opts.Tokens) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if ok {
			for _, t := range s.opts.Tokens {
				if subtle.ConstantTimeCompare([]byte(got), []byte(t)) == 1 {
					h.ServeHTTP(w, r)
					return
				}
			}
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="berth"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	})
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

// PodObject renders a stored pod as a v1.Pod with its status, bound to
// node (spec.nodeName) as the kubelet's static pods are, when node is set.
func PodObject(p *model.Pod, node string) v1.Pod {
	out := *p.Spec.DeepCopy()
	if node != "" {
		out.Spec.NodeName = node
	}
	out.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	out.Status = *p.Status.DeepCopy()
	out.Status.Phase = PodStatus(p).Phase
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations["berth.io/source"] = p.Source
	out.Annotations["berth.io/origin"] = p.Origin
	if p.Error != "" {
		out.Annotations["berth.io/rejected-update"] = p.Error
	}
	out.CreationTimestamp = metav1.Time{Time: p.SeenAt}
	return out
}

// PodStatus is the status PodObject gives p, shared with the stored pod
// (not copied): for reading and encoding only, never to be modified.
func PodStatus(p *model.Pod) v1.PodStatus {
	s := p.Status
	if s.Phase == "" {
		s.Phase = v1.PodPending
	}
	return s
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
		list.Items = append(list.Items, PodObject(p, s.opts.Node))
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
	if p == nil {
		http.Error(w, fmt.Sprintf("pod %s not found", key), http.StatusNotFound)
		return
	}
	writeJSON(w, PodObject(p, s.opts.Node))
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

// listEvents answers the recent events, newest last; ?namespace= and ?pod=
// filter.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) {
	out := []events.Event{}
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
