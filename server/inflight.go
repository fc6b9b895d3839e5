package server

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// retryAfter is the Retry-After, in seconds, of a request refused over an
// in-flight cap: the kube-apiserver's answer when it sheds requests, which
// client-go waits and retries on.
const retryAfter = 1

// inflightLimit bounds one class of requests in progress at once: at most
// total, and at most perToken for one token; requests with no known token
// count as one client. Zero is no cap. Safe for concurrent use.
type inflightLimit struct {
	total, perToken int
	// overToken and overTotal are the refusals at each cap, naming its
	// config key.
	overToken, overTotal string

	mu      sync.Mutex
	open    int
	byToken map[string]int
}

// newWatchLimit caps the requests held open (see holdsOpen):
// server.max_watches, server.max_watches_per_token.
func newWatchLimit(total, perToken int) *inflightLimit {
	return &inflightLimit{total: total, perToken: perToken, byToken: map[string]int{},
		overToken: fmt.Sprintf("too many watches: this client holds %d open (watches and logs), the most one token may (server.max_watches_per_token); close one or retry later", perToken),
		overTotal: fmt.Sprintf("too many watches: %d are open (watches and logs), the most the node serves (server.max_watches); retry later", total)}
}

// newMutatingLimit caps the requests that change state (see mutates):
// server.max_mutating_requests, server.max_mutating_requests_per_token.
func newMutatingLimit(total, perToken int) *inflightLimit {
	return &inflightLimit{total: total, perToken: perToken, byToken: map[string]int{},
		overToken: fmt.Sprintf("too many requests: this client has %d requests that change objects in flight, the most one token may (server.max_mutating_requests_per_token); retry later", perToken),
		overTotal: fmt.Sprintf("too many requests: %d requests that change objects are in flight, the most the node serves (server.max_mutating_requests); retry later", total)}
}

// acquire takes a slot for a request of token; refusal, when not empty,
// says which cap is reached and nothing is taken. Otherwise release gives
// the slot back and must be called exactly once.
func (l *inflightLimit) acquire(token string) (release func(), refusal string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perToken > 0 && l.byToken[token] >= l.perToken {
		return nil, l.overToken
	}
	if l.total > 0 && l.open >= l.total {
		return nil, l.overTotal
	}
	l.open++
	l.byToken[token]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.open--
			if l.byToken[token]--; l.byToken[token] == 0 {
				delete(l.byToken, token)
			}
		})
	}, ""
}

// limitOf is the cap r counts under, nil for none: s.watches for requests
// held open (a route of logs, or see holdsOpen), s.mutating for the other
// requests that change state; exec, attach and port-forward (admin only,
// a) count under neither. holding reports the first.
func (s *Server) limitOf(a access, logs bool, r *http.Request) (l *inflightLimit, holding bool) {
	switch {
	case (logs && readsOnly(r)) || holdsOpen(r):
		return s.watches, true
	case a != accessExec && mutates(r):
		return s.mutating, false
	}
	return nil, false
}

// logRoute reports whether pattern ("GET /path") serves logs: a pod's
// (.../pods/{name}/log, /containerLogs/) or the node's (/logs/,
// .../proxy/logs/). A log read stays open as long as its client reads,
// followed or not, holding an engine stream or a file: the apiserver
// counts the log subresource as long-running too.
func logRoute(pattern string) bool {
	_, path, _ := strings.Cut(pattern, " ")
	return strings.HasSuffix(path, "/log") || strings.HasPrefix(path, "/containerLogs/") ||
		strings.HasPrefix(path, "/logs/") || strings.Contains(path, "/proxy/logs/")
}

// readsOnly reports whether r is a GET, or a HEAD (which the GET routes
// serve, handler and all).
func readsOnly(r *http.Request) bool {
	return r.Method == http.MethodGet || r.Method == http.MethodHead
}

// holdsOpen reports whether r is a watch, which stays open until its
// client leaves: a GET or HEAD with ?watch= (the Kubernetes API's
// watches, /pods?watch=1) that is not explicitly false. A value that is
// not a boolean counts too: the handler refuses it at once.
func holdsOpen(r *http.Request) bool {
	if !readsOnly(r) {
		return false
	}
	if vs, ok := r.URL.Query()["watch"]; ok {
		if b, err := strconv.ParseBool(vs[0]); err != nil || b {
			return true
		}
	}
	return false
}

// mutates reports whether r asks to change state: POST, PUT, PATCH,
// DELETE (the kube-apiserver's mutating verbs).
func mutates(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}
