package registry

import (
	"context"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-dev/berth/kubeapi/printers"
)

// MetricsGroupVersion is the served version of metrics.k8s.io.
const MetricsGroupVersion = "metrics.k8s.io/v1beta1"

// sourceFilter selects the sources whose objects a node-wide view counts;
// nil counts every source.
type sourceFilter func(source string) bool

// Watch event types, as in the Kubernetes API.
const (
	WatchAdded    = "ADDED"
	WatchModified = "MODIFIED"
	WatchDeleted  = "DELETED"
	WatchBookmark = "BOOKMARK"
	// InitialEventsEnd annotates the bookmark that ends the initial events
	// of a watch with sendInitialEvents=true.
	InitialEventsEnd = "k8s.io/initial-events-end"
)

// Kind is one served kind (of the core group, coordination.k8s.io or
// metrics.k8s.io), registered once: its names, how its objects are read
// and versioned (Versions), selected (Fields) and printed (Columns,
// Cells). The generic handlers serve every Kind alike.
type Kind struct {
	Name, Singular, Kind string
	ShortNames           []string
	Namespaced           bool
	// APIVersion is the group/version ("v1"), ListKind the kind of a list
	// ("PodList"); Zero is an empty object, whose field set names the
	// supported field labels.
	APIVersion, ListKind string
	Zero                 func() Object
	// Poll is how often a watch reads a kind again that no store write
	// announces (0: the store's kinds, whose writes wake their watches).
	Poll time.Duration
	// Fields are the field labels a fieldSelector may name, with their
	// values for an object; metadata.name and metadata.namespace are
	// always supported.
	Fields func(runtime.Object) fields.Set
	// Columns and Cells print the Table.
	Columns []metav1.TableColumnDefinition
	Cells   printers.Cells
	// Push, when set, is the kind as push-scoped requests see it, for
	// kinds that aggregate over sources (namespaces, the node's pod
	// count): its own view of the push source's objects, with its own
	// versions, so that no list, get or watch (resumed ones included) of a
	// push token carries another source's.
	Push *Kind
	// Versions reads the kind's objects at their resourceVersions.
	Versions Versions
	// Writable kinds are created, replaced, patched and deleted through
	// the push source, which decodes, defaults and validates them as its
	// manifests (their write strategy) and persists them.
	Writable bool

	// stored, when set, is the kind as the store holds it; else snapshot
	// returns every object now (ws, may be nil, gets the channels that
	// fire on a change) and gone marks the last state of an object that
	// left it, as its DELETED event carries it.
	stored   *storeKind
	snapshot func(ctx context.Context, ws memdb.WatchSet) ([]item, error)
	gone     func(o Object)
}

// MetadataFields are the field labels of every kind.
func MetadataFields(o metav1.Object) fields.Set {
	return fields.Set{"metadata.name": o.GetName(), "metadata.namespace": o.GetNamespace()}
}
