package admission

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/resourcehelper"
)

// index is what every stored desired pod holds (its source, host ports,
// UID, claims and requests), by pod key and by what can clash, each list
// of holders in key order as a pass over the store would meet them. It is
// kept in a Memo from one decision to the next, so that AdmitChanged looks
// up what can clash with a changed pod instead of passing over every pod.
type index struct {
	valid  bool
	pods   map[string]indexed
	ports  map[portSlot][]string
	uids   map[types.UID][]string
	claims map[string][]string
	// total is the requests of every indexed pod, ended or not.
	total resourcehelper.Requests
}

type indexed struct {
	source string
	spec   *v1.Pod
	facts  *specFacts
}

// rebuild indexes all, the store's desired pods.
func (ix *index) rebuild(all []*model.Pod, m *Memo) {
	*ix = index{valid: true, pods: make(map[string]indexed, len(all)), ports: map[portSlot][]string{},
		uids: make(map[types.UID][]string, len(all)), claims: map[string][]string{}}
	for _, p := range all {
		ix.set(p.Key, p.Source, p.Spec, m)
	}
}

// set indexes the pod at key k as source's spec.
func (ix *index) set(k, source string, spec *v1.Pod, m *Memo) {
	if old, ok := ix.pods[k]; ok {
		if old.source == source && old.spec == spec {
			return
		}
		ix.del(k)
	}
	f := m.facts(spec)
	ix.pods[k] = indexed{source: source, spec: spec, facts: f}
	for _, hp := range f.ports {
		s := portSlot{hp.proto, hp.port}
		ix.ports[s] = insertKey(ix.ports[s], k)
	}
	ix.uids[f.uid] = insertKey(ix.uids[f.uid], k)
	for _, ck := range f.claims {
		ix.claims[ck] = insertKey(ix.claims[ck], k)
	}
	ix.total = ix.total.Plus(f.requests)
}

// del forgets the pod at key k.
func (ix *index) del(k string) {
	old, ok := ix.pods[k]
	if !ok {
		return
	}
	delete(ix.pods, k)
	for _, hp := range old.facts.ports {
		s := portSlot{hp.proto, hp.port}
		if ix.ports[s] = removeKey(ix.ports[s], k); len(ix.ports[s]) == 0 {
			delete(ix.ports, s)
		}
	}
	if ix.uids[old.facts.uid] = removeKey(ix.uids[old.facts.uid], k); len(ix.uids[old.facts.uid]) == 0 {
		delete(ix.uids, old.facts.uid)
	}
	for _, ck := range old.facts.claims {
		if ix.claims[ck] = removeKey(ix.claims[ck], k); len(ix.claims[ck]) == 0 {
			delete(ix.claims, ck)
		}
	}
	ix.total = ix.total.Plus(resourcehelper.Requests{CPUMilli: -old.facts.requests.CPUMilli, Memory: -old.facts.requests.Memory})
}

func insertKey(keys []string, k string) []string {
	i, found := slices.BinarySearch(keys, k)
	if found {
		return keys
	}
	return slices.Insert(keys, i, k)
}

func removeKey(keys []string, k string) []string {
	if i, found := slices.BinarySearch(keys, k); found {
		return slices.Delete(keys, i, i+1)
	}
	return keys
}
