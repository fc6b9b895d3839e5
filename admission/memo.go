package admission

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/resourcehelper"
)

// Memo is what admission keeps from one decision to the next: what it
// derived from each pod spec object (requests, host ports, UID, claims),
// so that holding an unchanged pod costs a lookup, and an index of what
// every stored pod holds, so that AdmitChanged looks up what can clash.
// Specs are never mutated, so a spec's entry never goes stale; entries of
// specs no longer used are dropped once the memo holds twice as many as a
// decision uses. The index mirrors the store while every write of desired
// pods is a decision recorded with Record; after any other write (Admit's
// whole decisions included) call Reset, and the next AdmitChanged builds
// it again from the store. A nil Memo keeps nothing. Not safe for
// concurrent use: give each decision-maker its own.
type Memo struct {
	specs map[*v1.Pod]*specFacts
	used  int
	index index
}

// Record notes AdmitChanged's change of source as written: its pods
// stored, its removed keys deleted.
func (m *Memo) Record(source string, c Change) {
	if m == nil || !m.index.valid {
		return
	}
	for _, p := range c.Pods {
		m.index.set(p.Key, source, p.Spec, m)
	}
	for _, k := range c.Removed {
		if e, ok := m.index.pods[k]; ok && e.source == source {
			m.index.del(k)
		}
	}
}

// Reset forgets the index: the store's desired pods were written otherwise
// than by a recorded change.
func (m *Memo) Reset() {
	if m != nil {
		m.index.valid = false
	}
}

// specFacts are what admission derives from one spec object.
type specFacts struct {
	uid      types.UID
	requests resourcehelper.Requests
	ports    []hostPort
	claims   []string
}

// NewMemo returns an empty memo.
func NewMemo() *Memo { return &Memo{specs: map[*v1.Pod]*specFacts{}} }

// facts returns pod's facts, derived on the first call for the object.
func (m *Memo) facts(pod *v1.Pod) *specFacts {
	if m == nil {
		return deriveFacts(pod)
	}
	m.used++
	f := m.specs[pod]
	if f == nil {
		f = deriveFacts(pod)
		m.specs[pod] = f
	}
	return f
}

func deriveFacts(pod *v1.Pod) *specFacts {
	return &specFacts{uid: pod.UID, requests: resourcehelper.PodRequests(&pod.Spec), ports: slices.Collect(hostPorts(pod)), claims: claimKeys(pod)}
}

// podRequests is resourcehelper.PodRequests of pod, remembered.
func (m *Memo) podRequests(pod *v1.Pod) resourcehelper.Requests { return m.facts(pod).requests }

// hostPorts is the host ports of pod, remembered.
func (m *Memo) hostPorts(pod *v1.Pod) []hostPort { return m.facts(pod).ports }

// trim ends a decision: the memo forgets everything when it holds far more
// than the decision used.
func (m *Memo) trim() {
	if m == nil {
		return
	}
	if len(m.specs) > 2*m.used+64 {
		clear(m.specs)
	}
	m.used = 0
}
