package admission

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

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

// specFacts are what admission derives from one spec object.
type specFacts struct {
	uid      types.UID
	requests manifest.Requests
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
	return &specFacts{uid: pod.UID, requests: manifest.PodRequests(&pod.Spec), ports: slices.Collect(hostPorts(pod)), claims: claimKeys(pod)}
}

// podRequests is manifest.PodRequests of pod, remembered.
func (m *Memo) podRequests(pod *v1.Pod) manifest.Requests { return m.facts(pod).requests }

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
