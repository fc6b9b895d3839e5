package kubeapi

import (
	"context"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
)

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

// resource is one served kind of the core group (or metrics.k8s.io): how
// to snapshot it, select it and print it as a Table row.
type resource struct {
	name, singular, kind string
	shortNames           []string
	namespaced           bool
	// snapshot returns every object now; ws (may be nil) gets the channels
	// that fire on a change. Kinds not in the store set poll instead.
	snapshot func(ctx context.Context, ws memdb.WatchSet) ([]item, error)
	// poll is how often a watch re-snapshots a kind without channels.
	poll time.Duration
	// fields are the field labels a fieldSelector may name, with their
	// values for an object; metadata.name and metadata.namespace are
	// always supported.
	fields func(runtime.Object) fields.Set
	// columns and cells print the Table; cells gets now for ages.
	columns []metav1.TableColumnDefinition
	cells   func(obj runtime.Object, now time.Time) ([]any, []metav1.TableRowCondition)
	// gone, when set, marks the last state of an object that left the
	// snapshot, as its DELETED event carries it (a pod's deletionTimestamp).
	gone func(o object)
	// apiVersion is the group/version ("v1"), listKind the kind of a
	// list ("PodList"); zero is an empty object, whose field set names the
	// supported field labels.
	apiVersion, listKind string
	zero                 func() object
	// stored, when set, is the kind as the store holds it: its versions
	// are the store's indexes, and snapshot, gone and tr are not used.
	stored *storeKind
	v      versions
	tr     *tracker
	// push, when set, is the kind as push-scoped requests see it, for
	// kinds that aggregate over sources (namespaces, the node's pod
	// count): its own snapshot of the push source's objects, with its own
	// tracker, so that no list, get or watch (resumed ones included) of a
	// push token carries another source's.
	push *resource
}

// metadataFields are the field labels of every kind.
func metadataFields(o metav1.Object) fields.Set {
	return fields.Set{"metadata.name": o.GetName(), "metadata.namespace": o.GetNamespace()}
}
