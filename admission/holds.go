package admission

import (
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

// holds are what admitted pods hold against a pod being checked: host
// ports, UIDs, other sources' pod keys, ReadWriteOncePod claims and node
// resources. A filter, when set, keeps only the ports and UIDs of the pods
// to check (AdmitChanged), so that holding a pod costs no map write unless
// it can clash.
type holds struct {
	v      View
	source string
	now    time.Time
	taken  portClaims
	uids   map[types.UID]string
	owner  map[string]string
	fits   *nodeFit
	once   *claimsOnce
	only   *holdFilter
	memo   *Memo
}

// holdFilter names the host port slots and UIDs that can clash: those
// of the few pods AdmitChanged checks.
type holdFilter struct {
	slots []portSlot
	uids  []types.UID
}

func newHolds(v View, u Update, only *holdFilter) *holds {
	return &holds{v: v, source: u.Source, now: u.Now, taken: portClaims{}, uids: map[types.UID]string{}, owner: map[string]string{},
		fits: newNodeFit(u.Node, u.Memo), once: newClaimsOnce(v, u), only: only, memo: u.Memo}
}

// hold records the host ports, UID and claims of the admitted pod spec at
// key k (its requests are the nodeFit's).
func (h *holds) hold(k string, spec *v1.Pod) {
	h.holdFacts(k, h.memo.facts(spec))
}

func (h *holds) holdFacts(k string, f *specFacts) {
	for _, hp := range f.ports {
		if s := (portSlot{hp.proto, hp.port}); h.only == nil || slices.Contains(h.only.slots, s) {
			h.taken[s] = append(h.taken[s], portClaim{k, hp})
		}
	}
	if h.only == nil || slices.Contains(h.only.uids, f.uid) {
		h.uids[f.uid] = k
	}
	for _, ck := range f.claims {
		h.once.holdClaim(k, ck)
	}
}

// holdOther holds p, a stored pod neither checked nor replaced by this
// decision, requests included, with one look at its spec's facts.
func (h *holds) holdOther(p *model.Pod) {
	f := h.memo.facts(p.Spec)
	h.holdFacts(p.Key, f)
	h.fits.holdBaseRequests(p, f.requests)
}

// check decides the new or changed pod d at key k, whose stored pod is old
// (nil when new) and merged merge's result: the pod to store and hold, or
// the refusal.
func (h *holds) check(d manifest.Desired, k string, old, merged *model.Pod) (*model.Pod, string, error) {
	if other, ok := h.owner[k]; ok {
		return nil, fmt.Sprintf("pod already provided by source %q", other), nil
	}
	p := merged
	if p == nil {
		p = merge(old, h.source, d, h.now)
	}
	unchanged := p == old
	if !unchanged {
		holder, err := heldBy(h.v, k, h.source)
		if err != nil {
			return nil, "", err
		}
		if holder != "" {
			return nil, fmt.Sprintf("pod is running for source %q, which has not synced since berth started", holder), nil
		}
	}
	if clash := h.taken.clash(k, d.Pod); clash != "" {
		return nil, clash, nil
	}
	if o, used := h.uids[d.Pod.UID]; used && o != k {
		return nil, fmt.Sprintf("metadata.uid: %s is already the uid of pod %s", d.Pod.UID, o), nil
	}
	if msg, err := foreignRef(h.v, h.source, d); err != nil || msg != "" {
		return nil, msg, err
	}
	if msg, err := h.once.admit(k, d.Pod); err != nil || msg != "" {
		return nil, msg, err
	}
	if msg := h.fits.admit(k, d.Pod, unchanged); msg != "" {
		return nil, msg, nil
	}
	h.uids[d.Pod.UID] = k
	h.taken.add(k, d.Pod)
	return p, "", nil
}
