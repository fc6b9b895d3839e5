// Package registry is the API's registry of kinds: each served kind is
// registered once (names, versions, field labels, Table columns), and the
// handlers of kubeapi serve get, list and watch of every kind alike. The
// kinds the store holds are read at the store's indexes; the kinds berth
// derives outside it (the node, namespaces, the lease, metrics) are
// versioned by a tracker on the same counter.
package registry

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/store"
)

// Options are what the kinds are rendered from.
type Options struct {
	Store *store.Store
	// Node is the node's name: spec.nodeName of every pod, the one Node.
	Node string
	// PushSource names the source whose objects the API may change; every
	// other source's are annotated berth.io/read-only ("": all are).
	PushSource string
	// Clock is the clock of ages, creation times and polls.
	Clock clock.Clock
	// NodeObject renders the node object, which counts pods (nil, or ok
	// false while the agent has not measured the node).
	NodeObject func(ctx context.Context, pods int) (node v1.Node, ok bool)
	// Usage is what metrics.k8s.io serves (nil: 503).
	Usage UsageSource
}

// Registry holds the served kinds. Build it with New; its Options may
// change (PushSource) until the first request, never after.
type Registry struct {
	o     *Options
	kinds []*Kind
	rev   counter
}

// kinds builds the kinds from o.
type kinds struct{ o *Options }

// pushFilter is the view of push-scoped requests: the push source's
// objects only (none while no push source is known).
func (a *kinds) pushFilter(source string) bool {
	return a.o.PushSource != "" && source == a.o.PushSource
}

// New registers every served kind over o.
func New(o *Options) *Registry {
	r := &Registry{o: o}
	if o.Store != nil {
		r.rev = storeCounter{o.Store}
	} else {
		rv := &revision{}
		rv.n.Store(uint64(o.Clock.Now().UnixMicro()))
		r.rev = rv
	}
	k := &kinds{o: o}
	for _, kind := range []*Kind{k.podsResource(), k.eventsResource(), k.nodesResource(),
		k.configMapsResource(), k.secretsResource(), k.claimsResource(), k.namespacesResource(),
		k.podMetricsResource(), k.nodeMetricsResource(), k.leasesResource()} {
		r.register(kind)
	}
	return r
}

// register gives kind its versions: the store's for a kind it holds, else
// a tracker on the registry's one revision counter.
func (r *Registry) register(kind *Kind) {
	r.track(kind)
	if kind.Push != nil {
		r.track(kind.Push)
	}
	r.kinds = append(r.kinds, kind)
}

func (r *Registry) track(kind *Kind) {
	if kind.stored != nil && r.o.Store != nil {
		kind.Versions = newStoreVersions(r.o.Store, *kind.stored)
		return
	}
	tr := newTracker(r.rev)
	tr.gone = kind.gone
	kind.Versions = trackerVersions{kind: kind, tr: tr}
}

// Kinds returns every registered kind, in registration order.
func (r *Registry) Kinds() []*Kind { return r.kinds }

// Lookup returns the kind named name (its resource) in apiVersion, or nil.
func (r *Registry) Lookup(name, apiVersion string) *Kind {
	for _, k := range r.kinds {
		if k.Name == name && k.APIVersion == apiVersion {
			return k
		}
	}
	return nil
}

// Revision is the revision the registry is at: the store's index.
func (r *Registry) Revision() uint64 { return r.rev.current() }
