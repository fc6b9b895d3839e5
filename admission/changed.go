package admission

import (
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

// Change is AdmitChanged's decision: only what differs from the store.
type Change struct {
	// Pods are the pods to write (store.SourceWrite Partial): the
	// admitted new and changed pods, and the refused changed pods on their
	// last good spec with Error set.
	Pods []*model.Pod
	// Removed are the keys of the source's pods to delete.
	Removed []string
	// Errors are the refusals; Warnings concern the changed pods admitted
	// all the same.
	Errors, Warnings []string
}

// AdmitChanged decides u as Admit does when the source's previous update
// was admitted whole (no error, refusal or warning, so that the store holds
// its pods as offered) and u has no manifest error and the same objects:
// changed are the indexes in u.Pods of the pods that are not the objects
// offered before, removed the keys of the pods offered before that u no
// longer has. Only the changed pods are checked; every other pod is held
// as it is stored, so the cost is one pass over the store's pods with no
// map write per pod, plus the checks of the changed ones. ok is false when
// the change is not one AdmitChanged decides (a key offered twice, or by a
// second origin): decide with Admit then.
func AdmitChanged(v View, u Update, changed []int, removed []string) (c Change, ok bool, err error) {
	all, err := v.Pods()
	if err != nil {
		return Change{}, false, err
	}
	defer u.Memo.trim()
	cand := make(map[string]int, len(changed))
	only := &holdFilter{}
	for _, i := range changed {
		d := u.Pods[i]
		k := key(d)
		if _, dup := cand[k]; dup {
			return Change{}, false, nil
		}
		cand[k] = i
		for hp := range hostPorts(d.Pod) {
			only.slots = append(only.slots, portSlot{hp.proto, hp.port})
		}
		only.uids = append(only.uids, d.Pod.UID)
	}
	gone := make(map[string]bool, len(removed))
	for _, k := range removed {
		gone[k] = true
	}
	h := newHolds(v, u, only)
	old := map[string]*model.Pod{}
	for _, p := range all {
		if i, ok := cand[p.Key]; ok {
			if p.Source == u.Source {
				if p.Origin != u.Pods[i].Origin && !gone[p.Key] {
					return Change{}, false, nil
				}
				old[p.Key] = p
				h.fits.hold(p)
				continue
			}
			h.owner[p.Key] = p.Source
		}
		if p.Source == u.Source && len(gone) > 0 && gone[p.Key] {
			continue
		}
		h.holdOther(p)
	}
	// As in Admit: a changed key whose spec is equal after all is held
	// unchecked first, then the changed pods are checked, then the new.
	merged := make(map[string]*model.Pod, len(changed))
	for _, i := range changed {
		d := u.Pods[i]
		k := key(d)
		if o := old[k]; o != nil {
			if merged[k] = merge(o, u.Source, d, u.Now); merged[k] == o {
				h.hold(k, o.Spec)
			}
		}
	}
	for _, pass := range []bool{true, false} {
		for _, i := range changed {
			d := u.Pods[i]
			k := key(d)
			o := old[k]
			if (o != nil) != pass || (o != nil && merged[k] == o) {
				continue
			}
			p, msg, err := h.check(d, k, o, merged[k])
			if err != nil {
				return Change{}, false, err
			}
			if msg != "" {
				e := manifest.ManifestError{Origin: d.Origin, PodKey: k, Err: msg}
				c.Errors = append(c.Errors, e.Error())
				if o != nil {
					c.Pods = append(c.Pods, withError(o, e.Error()))
				}
				continue
			}
			c.Pods = append(c.Pods, p)
		}
	}
	for _, k := range removed {
		if _, ok := cand[k]; !ok {
			c.Removed = append(c.Removed, k)
		}
	}
	offered := make([]manifest.Desired, 0, len(changed))
	for _, i := range changed {
		offered = append(offered, u.Pods[i])
	}
	c.Warnings = u.Node.warnings(offered)
	return c, true, nil
}
