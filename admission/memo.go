package admission

import (
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/manifest"
)

// Memo keeps what admission derives from a pod spec object (its requests
// and host ports) from one decision to the next, so that holding an
// unchanged pod costs a lookup. Specs are never mutated, so an entry never
// goes stale; the entries of specs no longer used are dropped once the
// memo holds twice as many as a decision uses. A nil Memo keeps nothing.
// Not safe for concurrent use: give each decision-maker its own.
type Memo struct {
	specs map[*v1.Pod]*specFacts
	used  int
}

type specFacts struct {
	requests    manifest.Requests
	ports       []hostPort
	hasRequests bool
	portsListed bool
}

// NewMemo returns an empty memo.
func NewMemo() *Memo { return &Memo{specs: map[*v1.Pod]*specFacts{}} }

func (m *Memo) facts(pod *v1.Pod) *specFacts {
	m.used++
	f := m.specs[pod]
	if f == nil {
		f = &specFacts{}
		m.specs[pod] = f
	}
	return f
}

// podRequests is manifest.PodRequests of pod, remembered.
func (m *Memo) podRequests(pod *v1.Pod) manifest.Requests {
	if m == nil {
		return manifest.PodRequests(&pod.Spec)
	}
	f := m.facts(pod)
	if !f.hasRequests {
		f.requests, f.hasRequests = manifest.PodRequests(&pod.Spec), true
	}
	return f.requests
}

// hostPorts is the host ports of pod, remembered.
func (m *Memo) hostPorts(pod *v1.Pod) []hostPort {
	if m == nil {
		return slices.Collect(hostPorts(pod))
	}
	f := m.facts(pod)
	if !f.portsListed {
		f.ports, f.portsListed = slices.Collect(hostPorts(pod)), true
	}
	return f.ports
}

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
