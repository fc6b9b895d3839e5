package cluster

import (
	"encoding/json"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
)

// keyValue is a status key's rendered value and what makes a change of it
// urgent.
type keyValue struct {
	value   string
	phase   v1.PodPhase
	ready   v1.ConditionStatus
	sandbox v1.ConditionStatus // PodReadyToStartContainers: network set up, IP known
	ok      bool               // false: the status did not render, no key
}

// urgentChange reports whether a key going from was to now is a change users
// wait for: the pod ended (Succeeded, Failed), reached Running with its
// network set up (its IP known), or its Ready condition changed after that.
// A new Pending pod, a Running pod whose sandbox has no IP yet (it follows
// within milliseconds), restart counts and messages are not.
func urgentChange(was, now keyValue) bool {
	switch {
	case !now.ok:
		return false
	case now.phase == v1.PodSucceeded || now.phase == v1.PodFailed:
		return was.phase != now.phase
	case now.sandbox == v1.ConditionFalse:
		return false
	case now.phase == v1.PodRunning && (was.phase != v1.PodRunning || was.sandbox == v1.ConditionFalse):
		return true
	}
	return was.ready != now.ready && (was.ready != "" || now.ready == v1.ConditionTrue)
}

// renderedPod is one pod's status key and value, for the pod object it was
// rendered from.
type renderedPod struct {
	pod *model.Pod
	key string
	kv  keyValue
}

// statusCache holds the rendered status of every pod of the store, in key
// order; refresh renders only the pods whose object changed (store objects
// are never mutated, so the same object renders the same).
type statusCache struct {
	prefix  string
	status  StatusFunc
	entries []renderedPod
	spare   []renderedPod
}

// refresh makes the cache match pods (in key order, as the store lists
// them) and calls changed with the status key of each pod rendered again,
// and gone with the key of each pod no longer there.
func (c *statusCache) refresh(pods []*model.Pod, changed func(key string, kv keyValue), gone func(key string)) {
	old, next := c.entries, c.spare[:0]
	i := 0
	for _, p := range pods {
		if i < len(old) && old[i].pod != p {
			for i < len(old) && old[i].pod.Key < p.Key {
				gone(old[i].key)
				i++
			}
		}
		if i < len(old) && old[i].pod == p {
			next = append(next, old[i])
			i++
			continue
		}
		if i < len(old) && old[i].pod.Key == p.Key {
			i++
		}
		r := renderedPod{pod: p, key: PodKey(c.prefix, p.Spec.Namespace, p.Spec.Name), kv: c.render(p)}
		next = append(next, r)
		changed(r.key, r.kv)
	}
	for ; i < len(old); i++ {
		gone(old[i].key)
	}
	clear(old)
	c.entries, c.spare = next, old[:0]
}

func (c *statusCache) render(p *model.Pod) keyValue {
	s := c.status(p)
	b, err := json.Marshal(s)
	if err != nil {
		return keyValue{}
	}
	kv := keyValue{value: string(b), phase: s.Phase, ok: true}
	for _, cond := range s.Conditions {
		switch cond.Type {
		case v1.PodReady:
			kv.ready = cond.Status
		case v1.PodReadyToStartContainers:
			kv.sandbox = cond.Status
		}
	}
	return kv
}

// each calls fn for every cached pod's key and value.
func (c *statusCache) each(fn func(key string, kv keyValue)) {
	for _, r := range c.entries {
		fn(r.key, r.kv)
	}
}
