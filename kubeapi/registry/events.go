package registry

import (
	"strings"

	"github.com/berth-dev/berth/kubeapi/printers"

	memdb "github.com/hashicorp/go-memdb"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/store"
)

// hiddenSource is the source of an event recorded for no stored pod (its
// pod gone, or another pod of its name): push-scoped requests do not see
// it.
const hiddenSource = "\x00gone"

// eventsKind is the events as the store records them, oldest first.
func (a *kinds) eventsKind() *storeKind {
	render := func(row any) item {
		r := row.(*store.EventRow)
		src, path := hiddenSource, containerPath(nil, r.Event.Container)
		switch {
		case r.Event.Node != "":
			if r.Event.Source != "" {
				src = r.Event.Source // the source the node event concerns
			}
		case r.Pod != nil:
			src, path = r.Pod.Source, containerPath(r.Pod.Spec, r.Event.Container)
		}
		_, name, _ := strings.Cut(r.Key, "/")
		return item{Key: r.Key, Obj: a.eventObject(r, path, name), Source: src}
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
// for), the container as fieldPath (spec.containers{name}), or the node
// as the kubelet names it (its name as uid, no namespace). An event that
// occurred more than once carries its count, first and last time as
// client-go's correlator writes them, and the series of events.k8s.io/v1
// (nil for a singleton, as there).
func (a *kinds) eventObject(r *store.EventRow, fieldPath, name string) *v1.Event {
	e := r.Event
	count, first, last := r.Occurrences()
	ref := v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: e.Namespace, Name: e.Pod, UID: types.UID(e.PodUID),
		FieldPath: fieldPath}
	if e.Node != "" {
		ref = v1.ObjectReference{Kind: "Node", Name: e.Node, UID: types.UID(e.Node)}
	}
	t := metav1.Time{Time: first}
	ev := &v1.Event{
		TypeMeta:       metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: e.Namespace, CreationTimestamp: t, UID: derivedUID("event", e.Namespace, name)},
		InvolvedObject: ref,
		Reason:         e.Reason, Message: e.Message, Type: e.Type,
		Source:         v1.EventSource{Component: "berth", Host: a.o.Node},
		FirstTimestamp: t, LastTimestamp: metav1.Time{Time: last}, Count: count,
		EventTime:           metav1.MicroTime{Time: first},
		ReportingController: "berth", ReportingInstance: a.o.Node,
	}
	if count > 1 {
		ev.Series = &v1.EventSeries{Count: count, LastObservedTime: metav1.MicroTime{Time: last}}
	}
	return ev
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

func (a *kinds) eventsResource() *Kind {
	return &Kind{
		Name: "events", Singular: "event", Kind: "Event", ShortNames: []string{"ev"}, Namespaced: true,
		APIVersion: "v1", ListKind: "EventList",
		Zero:   func() Object { return &v1.Event{} },
		stored: a.eventsKind(),
		Fields: func(o runtime.Object) fields.Set {
			e := o.(*v1.Event)
			return fields.Set{"involvedObject.kind": e.InvolvedObject.Kind, "involvedObject.namespace": e.InvolvedObject.Namespace,
				"involvedObject.name": e.InvolvedObject.Name, "involvedObject.uid": string(e.InvolvedObject.UID),
				"involvedObject.apiVersion": e.InvolvedObject.APIVersion, "involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
				"involvedObject.fieldPath": e.InvolvedObject.FieldPath, "reason": e.Reason, "reportingComponent": e.ReportingController,
				"source": e.Source.Component, "type": e.Type}
		},
		Columns: printers.EventColumns,
		Cells:   printers.EventCells,
	}
}
