package admission

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

// holds are what admitted pods hold against a pod being checked: host
// ports, UIDs, other sources' pod keys, ReadWriteOncePod claims and node
// resources. Admit holds every pod in its maps; AdmitChanged looks the
// store's pods up in the index (but those skip names) and holds only the
// pods it decides in the maps, which then come after the index's, as they
// would in a pass over the store.
type holds struct {
	v      View
	source string
	now    time.Time
	taken  portClaims
	uids   map[types.UID]string
	owner  map[string]string
	fits   *nodeFit
	once   *claimsOnce
	memo   *Memo
	ix     *index
	skip   func(key string) bool
}

func newHolds(v View, u Update, ix *index, skip func(string) bool) *holds {
	h := &holds{v: v, source: u.Source, now: u.Now, taken: portClaims{}, uids: map[types.UID]string{}, owner: map[string]string{},
		fits: newNodeFit(u.Node, u.Memo), once: newClaimsOnce(v, u), memo: u.Memo, ix: ix, skip: skip}
	if ix != nil {
		h.once.base = func(ck string) (string, bool) {
			for _, k := range ix.claims[ck] {
				if !skip(k) {
					return k, true
				}
			}
			return "", false
		}
	}
	return h
}

// hold records the host ports, UID and claims of the admitted pod spec at
// key k (its requests are the nodeFit's).
func (h *holds) hold(k string, spec *v1.Pod) {
	f := h.memo.facts(spec)
	for _, hp := range f.ports {
		h.taken.addPort(k, hp)
	}
	h.uids[f.uid] = k
	for _, ck := range f.claims {
		h.once.holdClaim(k, ck)
	}
}

// clash describes the first port of p (pod key k) another pod holds: in
// the index, then in the maps.
func (h *holds) clash(k string, p *v1.Pod) string {
	if h.ix != nil {
		for hp := range hostPorts(p) {
			for _, hk := range h.ix.ports[portSlot{hp.proto, hp.port}] {
				if hk == k || h.skip(hk) {
					continue
				}
				for _, t := range h.ix.pods[hk].facts.ports {
					if conflicts(hp, t) {
						return clashMessage(hp, h.holder(hk))
					}
				}
			}
		}
	}
	return h.taken.clash(k, p, h.holder)
}

// holder names the pod at key in a refusal: by its key when it is the
// source's own, else only by its source, since a source sees only its own
// objects (a push client reads the refusal).
func (h *holds) holder(key string) string {
	if p, err := h.v.Pod(key); err == nil && p != nil && p.Source != h.source {
		return fmt.Sprintf("a pod of source %q", p.Source)
	}
	return "pod " + key
}

// uidHolder is the pod holding uid last: in the maps, else in the index.
func (h *holds) uidHolder(uid types.UID) (string, bool) {
	if k, ok := h.uids[uid]; ok {
		return k, true
	}
	if h.ix != nil {
		keys := h.ix.uids[uid]
		for i := len(keys) - 1; i >= 0; i-- {
			if !h.skip(keys[i]) {
				return keys[i], true
			}
		}
	}
	return "", false
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
	if clash := h.clash(k, d.Pod); clash != "" {
		return nil, clash, nil
	}
	if o, used := h.uidHolder(d.Pod.UID); used && o != k {
		return nil, fmt.Sprintf("metadata.uid: %s is already the uid of %s", d.Pod.UID, h.holder(o)), nil
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
