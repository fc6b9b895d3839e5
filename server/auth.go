package server

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"

	"github.com/berth-dev/berth/model"
)

// scope is what a request may do, resolved once per request from its
// bearer token by guard:
//
//   - scopeAdmin: a token of Options.Tokens (server.token_file): everything.
//   - scopePush: a token of Options.PushTokens (sources.push.token_file):
//     the push routes, and GET /pods (list, watch, one pod) showing only the
//     push source's pods; 403 anywhere else.
//   - scopeOpen: no admin token is configured and the request brings none
//     of the tokens: what berth always served without server.token_file
//     (on loopback only, to loopback Host names: see hostGuard), i.e.
//     everything but exec and node logs (403) and the push routes (401:
//     pushing is never anonymous).
//
// With admin tokens configured, a request with no known token is a 401.
type scope int

const (
	scopeOpen scope = iota
	scopePush
	scopeAdmin
)

// access is what a route requires.
type access int

const (
	accessPods     access = iota // GET /pods, /pods/{ns}/{name}: any scope, push filtered
	accessPush                   // the push routes: push or admin
	accessAdmin                  // the rest: admin, or open without admin tokens
	accessExec                   // exec: admin only
	accessNodeLogs               // the node's log directory: admin only
)

// Answers of guard.
const (
	errPushNeedsToken = "unauthorized: pushing pods needs a bearer token from sources.push.token_file or server.token_file"
	errPushScope      = "forbidden: a push token (sources.push.token_file) may only create, update, delete and read the push source's pods; this needs a token from server.token_file"
)

type scopeKey struct{}

// guard serves h to the requests whose scope grants a, with the scope in
// the request's context; it answers the others 401 or 403 in plain text.
// logs marks a route of logs (see logRoute).
func (s *Server) guard(a access, logs bool, h http.Handler) http.Handler {
	return s.guardWith(a, logs, h, plainRefusal)
}

// refusal writes a 401, 403 or 429 answer with msg.
type refusal func(w http.ResponseWriter, code int, msg string)

func plainRefusal(w http.ResponseWriter, code int, msg string) {
	if code == http.StatusUnauthorized {
		unauthorized(w, msg)
		return
	}
	http.Error(w, msg, code)
}

// guardWith is guard answering refusals with refuse. A request also needs
// a slot of its in-flight cap (limitOf): over it, it is a 429 with
// Retry-After; a refused request that would have been held open also has
// its HTTP/1 connection closed.
func (s *Server) guardWith(a access, logs bool, h http.Handler, refuse refusal) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sc, token, known := s.scopeOf(r)
		if !known {
			refuse(w, http.StatusUnauthorized, "unauthorized")
			return
		}
		switch {
		case sc == scopeAdmin, a == accessPods:
		case sc == scopePush && a != accessPush:
			refuse(w, http.StatusForbidden, errPushScope)
			return
		case sc == scopeOpen && a == accessPush:
			refuse(w, http.StatusUnauthorized, errPushNeedsToken)
			return
		case sc == scopeOpen && a == accessExec:
			refuse(w, http.StatusForbidden, ErrAnonymousExec)
			return
		case sc == scopeOpen && a == accessNodeLogs:
			refuse(w, http.StatusForbidden, ErrAnonymousNodeLogs)
			return
		}
		if l, holding := s.limitOf(a, logs, r); l != nil {
			release, msg := l.acquire(token)
			if msg != "" {
				w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
				if holding && r.ProtoMajor == 1 {
					// Its slot under server.max_connections too. (Over
					// HTTP/2 it would send GOAWAY, moving the client's
					// next requests off the connection its watches share.
					// A refused write keeps its connection: client-go
					// retries it there after Retry-After.)
					w.Header().Set("Connection", "close")
				}
				refuse(w, http.StatusTooManyRequests, msg)
				return
			}
			defer release()
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), scopeKey{}, sc)))
	})
}

// scopeOf resolves r's bearer token; token is the one matched ("" for
// none); known is false when admin tokens are configured and r has none of
// the tokens.
func (s *Server) scopeOf(r *http.Request) (sc scope, token string, known bool) {
	if got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		if matches(got, s.opts.Tokens) {
			return scopeAdmin, got, true
		}
		if matches(got, s.opts.PushTokens) {
			return scopePush, got, true
		}
	}
	return scopeOpen, "", len(s.opts.Tokens) == 0
}

func matches(got string, tokens []string) bool {
	found := false
	for _, t := range tokens {
		if subtle.ConstantTimeCompare([]byte(got), []byte(t)) == 1 {
			found = true
		}
	}
	return found
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="berth"`)
	http.Error(w, msg, http.StatusUnauthorized)
}

// visible reports whether the request may see p: push-scoped requests see
// the push source's pods only.
func (s *Server) visible(r *http.Request, p *model.Pod) bool {
	sc, _ := r.Context().Value(scopeKey{}).(scope)
	return sc != scopePush || (s.pushSource != "" && p.Source == s.pushSource)
}
