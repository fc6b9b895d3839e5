package admission

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

// holds are what admitted pods hold against a pod being checked: host
// ports, UIDs, other sources' pod keys, ReadWriteOncePod claims and node
// resources. The store's pods hold through its indexes, but those skip
// names (the pods this decision replaces or removes); the pods this
// decision admits hold in small maps, which come after the store's.
type holds struct {
	v      View
	source string
	now    time.Time
	skip   func(*model.Pod) bool
	owner  map[string]string // pod key → the other source storing it
	taken  portClaims
	uids   map[types.UID]string
	fits   *nodeFit
	once   *claimsOnce
	// restoring: the source has not synced since berth started, so its
	// new pods may be pods berth ran before (createdAt).
	restoring bool
}

func newHolds(v View, u Update, owner map[string]string, skip func(*model.Pod) bool) *holds {
	src, _ := v.Source(u.Source)
	return &holds{v: v, source: u.Source, now: u.Now, skip: skip, owner: owner, taken: portClaims{}, uids: map[types.UID]string{},
		fits: newNodeFit(v, u.Node), once: newClaimsOnce(v, u, skip), restoring: src == nil || !src.Synced}
}

// hold records the host ports, UID and claims of the pod spec held at key
// k (its requests are the nodeFit's).
func (h *holds) hold(k string, spec *v1.Pod) {
	h.taken.add(k, spec)
	h.uids[spec.UID] = k
	h.once.hold(k, spec)
}

// clash describes the first port of p (pod key k) another pod holds: in
// the store, else among the pods decided.
func (h *holds) clash(k string, p *v1.Pod) (string, error) {
	for hp := range model.HostPorts(p) {
		held, err := h.v.PodsByHostPort(hp)
		if err != nil {
			return "", err
		}
		for _, o := range held {
			if o.Key != k && !h.skip(o) {
				return clashMessage(hp, h.holder(o.Key)), nil
			}
		}
		if t, ok := h.taken.holder(k, hp); ok {
			return clashMessage(hp, h.holder(t)), nil
		}
	}
	return "", nil
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

// uidHolder is the pod holding uid last: among the pods decided, else in
// the store.
func (h *holds) uidHolder(uid types.UID) (string, bool, error) {
	if k, ok := h.uids[uid]; ok {
		return k, true, nil
	}
	held, err := h.v.PodsByUID(string(uid))
	if err != nil {
		return "", false, err
	}
	for i := len(held) - 1; i >= 0; i-- {
		if !h.skip(held[i]) {
			return held[i].Key, true, nil
		}
	}
	return "", false, nil
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
	var ctrs []*model.Container // of key k, read once for a new or changed pod
	if !unchanged {
		var err error
		if ctrs, err = h.v.ContainersByPod(k); err != nil {
			return nil, "", err
		}
		holder, err := heldBy(h.v, ctrs, h.source)
		if err != nil {
			return nil, "", err
		}
		if holder != "" {
			return nil, fmt.Sprintf("pod is running for source %q, which has not synced since berth started", holder), nil
		}
	}
	if clash, err := h.clash(k, d.Pod); err != nil || clash != "" {
		return nil, clash, err
	}
	o, used, err := h.uidHolder(d.Pod.UID)
	if err != nil {
		return nil, "", err
	}
	if used && o != k {
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
	if !unchanged && h.restoring && (old == nil || old.Spec.UID != d.Pod.UID) {
		// A new pod (or incarnation) of a source's first update since
		// berth started: it may be one berth ran before it restarted,
		// whose sandbox remembers when it was created. (Later, one
		// deleted and made again keeps no earlier time.)
		if at, ok := createdAt(ctrs, h.source, d.Pod.UID, h.now); ok {
			// Its start was the earlier berth's to observe: marked
			// started, it is not observed again (the pod start
			// duration), as the kubelet tracks only pods it saw first.
			// status.startTime is served before the first reconcile.
			cp := *p
			cp.SeenAt, cp.StartedAt = at, at
			cp.Status.StartTime = &metav1.Time{Time: at}
			p = &cp
		}
	}
	h.uids[d.Pod.UID] = k
	h.taken.add(k, d.Pod)
	return p, "", nil
}
