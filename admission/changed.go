package admission

import (
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/resourcehelper"
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
	m := u.Memo
	if m == nil {
		m = NewMemo()
		u.Memo = m
	}
	defer m.trim()
	if !m.index.valid {
		all, err := v.Pods()
		if err != nil {
			return Change{}, false, err
		}
		m.index.rebuild(all, m)
	}
	ix := &m.index
	cand := make(map[string]int, len(changed))
	for _, i := range changed {
		k := key(u.Pods[i])
		if _, dup := cand[k]; dup {
			return Change{}, false, nil
		}
		cand[k] = i
	}
	gone := make(map[string]bool, len(removed))
	for _, k := range removed {
		gone[k] = true
	}
	// The source's stored pods at the changed and removed keys hold
	// nothing against the changed pods; every other stored pod does.
	skip := func(k string) bool {
		_, c := cand[k]
		return (c || gone[k]) && ix.pods[k].source == u.Source
	}
	h := newHolds(v, u, ix, skip)
	old := map[string]*model.Pod{}
	for k, i := range cand {
		p, err := v.Pod(k)
		if err != nil {
			return Change{}, false, err
		}
		switch {
		case p == nil:
		case p.Source != u.Source:
			h.owner[k] = p.Source
		case p.Origin != u.Pods[i].Origin && !gone[k]:
			return Change{}, false, nil
		default:
			old[k] = p
		}
	}
	if u.Node != nil {
		base := ix.total
		minus := func(r resourcehelper.Requests) {
			base = resourcehelper.Requests{CPUMilli: base.CPUMilli - r.CPUMilli, Memory: base.Memory - r.Memory}
		}
		for k := range cand {
			if e, ok := ix.pods[k]; ok && skip(k) {
				minus(e.facts.requests)
			}
		}
		for k := range gone {
			if _, c := cand[k]; !c && skip(k) {
				minus(ix.pods[k].facts.requests)
			}
		}
		ended, err := v.TerminalPods()
		if err != nil {
			return Change{}, false, err
		}
		for _, p := range ended {
			if e, ok := ix.pods[p.Key]; ok && !skip(p.Key) {
				minus(e.facts.requests)
			}
		}
		h.fits.base = base
		for _, o := range old {
			h.fits.hold(o)
		}
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
