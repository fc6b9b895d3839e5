package controller

import "github.com/berth-dev/berth/model"

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

// imageEvent records an image manager's event about container of pod
// podKey's incarnation podUID; the source is the stored pod's while it is
// still that incarnation (else none, and no reader matches it to a pod).
func (c *Controller) imageEvent(podKey, podUID, container, typ, reason, format string, args ...interface{}) {
	pod := eventPod{key: podKey, uid: podUID}
	if p, _ := c.store.Pod(nil, podKey); p != nil && p.Spec != nil && string(p.Spec.UID) == podUID {
		pod.source = p.Source
	}
	c.event(pod, container, typ, reason, format, args...)
}
