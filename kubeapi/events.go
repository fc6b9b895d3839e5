package kubeapi

import (
	"strings"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/store"
)

// hiddenSource is the source of an event recorded for no stored pod (its
// pod gone, or another pod of its name): push-scoped requests do not see
// it.
const hiddenSource = "\x00gone"

// eventsKind is the events as the store records them, oldest first.
func (a *API) eventsKind() *storeKind {
	render := func(row any) item {
		r := row.(*store.EventRow)
		src, path := hiddenSource, containerPath(nil, r.Event.Container)
		if r.Pod != nil {
			src, path = r.Pod.Source, containerPath(r.Pod.Spec, r.Event.Container)
		}
		_, name, _ := strings.Cut(r.Key, "/")
		return item{key: r.Key, obj: a.eventObject(r.Event, path, name), source: src}
	}
	return &storeKind{
		tables: []string{store.TableEvents},
		rows: func(snap store.Snapshot, ws memdb.WatchSet) ([]any, error) {
			evs, err := snap.Events(ws)
			out := make([]any, len(evs))
			for i, e := range evs {
				out[i] = e
			}
			return out, err
		},
		row: func(snap store.Snapshot, key string) (any, error) {
			e, err := snap.Event(key)
			if e == nil || err != nil {
				return nil, err
			}
			return e, nil
		},
		render: render,
		gone:   func(d *store.Deletion) item { return render(d.Last) },
	}
}

// eventObject renders one of berth's events, named name, as the kubelet's
// core/v1 Event: involvedObject is the pod (with the uid it was recorded
// for), the container as fieldPath (spec.containers{name}).
func (a *API) eventObject(e events.Event, fieldPath, name string) *v1.Event {
	t := metav1.Time{Time: e.Time}
	return &v1.Event{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.Namespace, CreationTimestamp: t, UID: derivedUID("event", e.Namespace, name)},
		InvolvedObject: v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: e.Namespace, Name: e.Pod, UID: types.UID(e.PodUID),
			FieldPath: fieldPath},
		Reason: e.Reason, Message: e.Message, Type: e.Type,
		Source:         v1.EventSource{Component: "berth", Host: a.o.Node},
		FirstTimestamp: t, LastTimestamp: t, Count: 1,
		ReportingController: "berth", ReportingInstance: a.o.Node,
	}
}

// containerPath is the fieldPath of container c of p, as the kubelet
// names it.
func containerPath(p *v1.Pod, c string) string {
	if c == "" {
		return ""
	}
	if p != nil {
		for _, ic := range p.Spec.InitContainers {
			if ic.Name == c {
				return "spec.initContainers{" + c + "}"
			}
		}
	}
	return "spec.containers{" + c + "}"
}

func (a *API) eventsResource() *resource {
	return &resource{
		name: "events", singular: "event", kind: "Event", shortNames: []string{"ev"}, namespaced: true,
		apiVersion: "v1", listKind: "EventList",
		zero:   func() object { return &v1.Event{} },
		stored: a.eventsKind(),
		fields: func(o runtime.Object) fields.Set {
			e := o.(*v1.Event)
			return fields.Set{"involvedObject.kind": e.InvolvedObject.Kind, "involvedObject.namespace": e.InvolvedObject.Namespace,
				"involvedObject.name": e.InvolvedObject.Name, "involvedObject.uid": string(e.InvolvedObject.UID),
				"involvedObject.apiVersion": e.InvolvedObject.APIVersion, "involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
				"involvedObject.fieldPath": e.InvolvedObject.FieldPath, "reason": e.Reason, "reportingComponent": e.ReportingController,
				"source": e.Source.Component, "type": e.Type}
		},
		columns: eventColumns,
		cells:   eventCells,
	}
}

// eventColumns are kubectl's event columns.
var eventColumns = []metav1.TableColumnDefinition{
	{Name: "Last Seen", Type: "string", Description: "The time at which the most recent occurrence of this event was recorded."},
	{Name: "Type", Type: "string", Description: "Type of this event (Normal, Warning), new types could be added in the future"},
	{Name: "Reason", Type: "string", Description: "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."},
	{Name: "Object", Type: "string", Description: "The object that this event is about."},
	{Name: "Subobject", Type: "string", Priority: 1, Description: "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement."},
	{Name: "Source", Type: "string", Priority: 1, Description: "The component reporting this event."},
	{Name: "Message", Type: "string", Description: "A human-readable description of the status of this operation."},
	{Name: "First Seen", Type: "string", Priority: 1, Description: "The time at which the event was first recorded."},
	{Name: "Count", Type: "string", Priority: 1, Description: "The number of times this event has occurred."},
	{Name: "Name", Type: "string", Format: "name", Priority: 1, Description: "Name must be unique within a namespace."},
}

// eventCells are the cells of kubectl's printEvent.
func eventCells(o runtime.Object, now time.Time) ([]any, []metav1.TableRowCondition) {
	e := o.(*v1.Event)
	first := translateTimestampSince(e.FirstTimestamp, now)
	last := translateTimestampSince(e.LastTimestamp, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if count == 0 {
		count = 1
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	source := e.Source.Component
	if e.Source.Host != "" {
		source += ", " + e.Source.Host
	}
	return []any{last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath, source, strings.TrimSpace(e.Message),
		first, int64(count), e.Name}, nil
}
