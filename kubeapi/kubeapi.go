// Package kubeapi serves the subset of the Kubernetes API that kubectl,
// client-go and k9s need for the node's own objects: discovery, pods (with
// Tables, watch, logs, exec, port-forward), events, the node, ConfigMaps,
// Secrets, claims and metrics.k8s.io. It builds handlers only; the server
// package mounts them behind its token scopes (server.RegisterKube).
package kubeapi

import (
	"context"
	"net/http"

	v1 "k8s.io/api/core/v1"

	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

// Access is what a route requires of the request's bearer token; the
// server maps it to its scopes.
type Access int

const (
	// AccessRead: any token the server knows (or none on an open server);
	// push-scoped requests see only what Options.Visible lets them.
	AccessRead Access = iota
	// AccessWrite: create, update, delete: a push or an admin token, never
	// anonymous.
	AccessWrite
	// AccessExec: exec, attach, port-forward: an admin token only.
	AccessExec
	// AccessAdmin: an admin token, or none on an open server (node-wide
	// data).
	AccessAdmin
	// AccessNodeLogs: the node's log directory: an admin token only, as
	// AccessExec (root-only files must not reach every local user).
	AccessNodeLogs
)

// Route is one handler to mount: Pattern is an http.ServeMux pattern with
// its method ("GET /api/v1/pods").
type Route struct {
	Pattern string
	Access  Access
	Handler http.Handler
	// refusal marks a route that only explains why its verb is not served;
	// discovery does not count it.
	refusal bool
}

// Options are what the read side serves from.
type Options struct {
	Store *store.Store
	// Node is the node's name: spec.nodeName of every pod, the one Node.
	Node string
	// Version is berth's version, reported by /version.
	Version string
	// Visible reports whether the request may see p (push-scoped requests
	// see the push source's pods only). Nil: every pod is visible. A pod
	// of no source must be visible exactly to the requests that see every
	// source: the others get the push view of namespaces and the node.
	Visible func(r *http.Request, p *model.Pod) bool
	// Clock is the clock of ages and watch timing (nil: the real one).
	Clock clock.Clock
	// PushSource names the source whose pods and objects the API may
	// change; every other source's are annotated berth.io/read-only
	// ("": all are read-only).
	PushSource string
	// NodeObject renders the node object, which counts pods (nil, or ok
	// false while the agent has not measured the node: a Node named Node
	// with an Unknown Ready condition).
	NodeObject func(ctx context.Context, pods int) (node v1.Node, ok bool)
	// Usage is what metrics.k8s.io serves, the numbers of
	// /metrics/resource (nil: metrics.k8s.io answers 503).
	Usage UsageSource
}

// API collects the routes of the Kubernetes API subset. Build with New,
// add the optional parts (streams, writes) with their Add methods, then
// hand Routes to the server; adding after Routes is a misuse.
type API struct {
	o         Options
	routes    []Route
	rev       counter
	resources []*resource
}

// New returns the API with the read routes of o.
func New(o Options) *API {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Visible == nil {
		o.Visible = func(*http.Request, *model.Pod) bool { return true }
	}
	a := &API{o: o}
	if o.Store != nil {
		a.rev = storeCounter{o.Store}
	} else {
		r := &revision{}
		r.n.Store(uint64(o.Clock.Now().UnixMicro()))
		a.rev = r
	}
	a.addReads()
	a.handle("/api/", AccessRead, notFoundHandler)
	a.handle("/apis/", AccessRead, notFoundHandler)
	return a
}

// currentRevision is the revision the API is at: the store's index.
func (a *API) currentRevision() uint64 { return a.rev.current() }

// Routes returns every route added so far.
func (a *API) Routes() []Route { return a.routes }

func (a *API) handle(pattern string, acc Access, h http.HandlerFunc) {
	a.routes = append(a.routes, Route{Pattern: pattern, Access: acc, Handler: h})
}
