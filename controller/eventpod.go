package controller

import (
	"fmt"
	"strings"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

// eventPod is the pod incarnation an event is about: its key, UID and
// source. Readers match events to a pod by all three, so a pod that takes
// a removed pod's name never sees the removed pod's events.
type eventPod struct{ key, uid, source string }

// podOf is the incarnation of desired pod p.
func podOf(p *model.Pod) eventPod {
	return eventPod{key: p.Key, uid: string(p.Spec.UID), source: p.Source}
}

// podOfContainer is the incarnation container ct belongs to, as its
// labels say.
func podOfContainer(ct *model.Container) eventPod {
	return eventPod{key: ct.PodKey, uid: ct.PodUID, source: ct.Source}
}

// planEventPods are the incarnations a plan's events are about: the
// desired pod, or, for a pod no source declares any more, each incarnation
// among its containers (the key alone when it has none).
func planEventPods(in *PlanInput) []eventPod {
	if in.Pod != nil {
		return []eventPod{podOf(in.Pod)}
	}
	var out []eventPod
	seen := map[eventPod]bool{}
	for _, ct := range in.Containers {
		ep := podOfContainer(ct)
		ep.key = in.Key
		if !seen[ep] {
			seen[ep] = true
			out = append(out, ep)
		}
	}
	if len(out) == 0 {
		out = append(out, eventPod{key: in.Key})
	}
	return out
}

// recorder records the controller's events about pods, stamped by the
// clock, into Config.Events as it is at the time of each event.
type recorder struct {
	cfg   *Config
	store *store.Store
}

// event records an event about container (empty: the pod) of the pod
// incarnation pod, named by its UID and source as well as its key.
func (r recorder) event(pod eventPod, container, typ, reason, format string, args ...interface{}) {
	ns, name, _ := strings.Cut(pod.key, "/")
	r.cfg.Events.Record(events.Event{Time: r.cfg.Clock.Now(), Namespace: ns, Pod: name, PodUID: pod.uid, Source: pod.source,
		Container: container, Type: typ, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// image records an image manager's event about container of pod podKey's
// incarnation podUID; the source is the stored pod's while it is still
// that incarnation (else none, and no reader matches it to a pod).
func (r recorder) image(podKey, podUID, container, typ, reason, format string, args ...interface{}) {
	pod := eventPod{key: podKey, uid: podUID}
	if p, _ := r.store.Pod(nil, podKey); p != nil && p.Spec != nil && string(p.Spec.UID) == podUID {
		pod.source = p.Source
	}
	r.event(pod, container, typ, reason, format, args...)
}
