package admission

import (
	"sort"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

// Change is a decision as the store writes it (store.SourceWrite Partial):
// only what differs from the store.
type Change struct {
	// Pods are the pods to write, by key: the admitted new and changed
	// pods, and stored pods whose Error changes (a refused change kept on
	// its last good spec, a pod kept while its update failed).
	Pods []*model.Pod
	// Removed are the keys of the source's pods to delete.
	Removed []string
	// Errors are the refusals, in the order decided; Warnings concern the
	// offered pods admitted all the same (AdmitChanged sets them).
	Errors, Warnings []string
	// Refused are the refusals by pod key.
	Refused map[string]string
}

// manifestErrors are an update's manifest errors as admission keeps them.
type manifestErrors struct {
	lines []string
	// failedOrigin marks origins that failed as a whole: their stored
	// pods are kept as they are.
	failedOrigin map[string]bool
	// podErr is the error of each pod key whose update failed: the pod
	// keeps its last good spec with it.
	podErr map[string]string
}

func readErrors(u Update) manifestErrors {
	me := manifestErrors{failedOrigin: map[string]bool{}, podErr: map[string]string{}}
	for _, e := range u.Errors {
		me.lines = append(me.lines, e.Error())
		switch {
		case e.PodKey == "":
			me.failedOrigin[e.Origin] = true
		case e.Kind == "":
			me.podErr[e.PodKey] = e.Error()
		}
	}
	return me
}

// decide is admission's one algorithm. cand are the indexes in u.Pods of
// the pods to decide and gone the keys of the source's stored pods that u
// no longer offers; every other stored pod holds what it holds (looked up
// through v's indexes), the source's candidates' and gone pods' excepted.
// A candidate offered once and as it is stored, without error, is no
// candidate after all. The others are decided in u's order: first those
// unchanged (a key offered twice), then the changed, then the new, so that
// an admitted pod keeps its ports against an edit or a newcomer. A gone
// pod whose update failed (me) is kept, with its error.
func decide(v View, u Update, me manifestErrors, cand []int, gone []string) (Change, error) {
	var c Change
	times := make(map[string]int, len(cand))
	for _, i := range cand {
		times[key(u.Pods[i])]++
	}
	stored := make(map[string]*model.Pod, len(cand)+len(gone))
	owner := map[string]string{}
	for k := range times {
		p, err := v.Pod(k)
		if err != nil {
			return Change{}, err
		}
		switch {
		case p == nil:
		case p.Source != u.Source:
			owner[k] = p.Source
		default:
			stored[k] = p
		}
	}
	// The candidates that are unchanged after all, and the kept gone pods,
	// hold as stored; the other stored candidates and gone pods are
	// replaced or removed.
	const (
		unchanged = iota
		changed
		added
	)
	type candidate struct {
		i      int
		k      string
		class  int
		merged *model.Pod
	}
	var todo []candidate
	replaced := map[string]bool{}
	for _, i := range cand {
		d := u.Pods[i]
		k := key(d)
		old := stored[k]
		cd := candidate{i: i, k: k, class: added}
		if old != nil {
			cd.class = changed
			cd.merged = merge(old, u.Source, d, u.Now)
			if _, bad := me.podErr[k]; cd.merged == old && old.Error == "" && !bad {
				if times[k] == 1 {
					continue
				}
				cd.class = unchanged
			}
			replaced[k] = true
		}
		todo = append(todo, cd)
	}
	var write []*model.Pod
	for _, k := range gone {
		if times[k] > 0 {
			continue
		}
		p, err := v.Pod(k)
		if err != nil {
			return Change{}, err
		}
		if p == nil || p.Source != u.Source {
			continue
		}
		msg, bad := me.podErr[k]
		if !bad && !me.failedOrigin[p.Origin] {
			c.Removed = append(c.Removed, k)
			stored[k], replaced[k] = p, true
			continue
		}
		if p.Error != msg {
			write = append(write, withError(p, msg))
		}
	}
	skip := func(p *model.Pod) bool { return p.Source == u.Source && replaced[p.Key] }
	h := newHolds(v, u, owner, skip)
	for k := range replaced {
		h.fits.unhold(stored[k])
	}
	for _, cd := range todo {
		if cd.class != added {
			h.fits.hold(stored[cd.k])
		}
	}

	podErr := me.podErr // a refusal is the pod's error from now on
	refuse := func(d manifest.Desired, k, msg string) {
		e := manifest.ManifestError{Origin: d.Origin, PodKey: k, Err: msg}
		c.Errors = append(c.Errors, e.Error())
		podErr[k] = e.Error()
		if c.Refused == nil {
			c.Refused = map[string]string{}
		}
		c.Refused[k] = e.Error()
	}
	next := make(map[string]*model.Pod, len(todo))
	for _, pass := range []int{unchanged, changed, added} {
		for _, cd := range todo {
			if cd.class != pass {
				continue
			}
			d, k := u.Pods[cd.i], cd.k
			if _, dup := next[k]; dup {
				refuse(d, k, "duplicate pod key in source")
				continue
			}
			if pass == unchanged {
				h.hold(k, d.Pod)
				next[k] = cd.merged
				continue
			}
			p, msg, err := h.check(d, k, stored[k], cd.merged)
			if err != nil {
				return Change{}, err
			}
			if msg != "" {
				refuse(d, k, msg)
				continue
			}
			next[k] = p
		}
	}
	// Refused candidates keep their last good spec, and the kept ones
	// carry their error (or none).
	for _, cd := range todo {
		k := cd.k
		if _, ok := next[k]; ok {
			continue
		}
		if old := stored[k]; old != nil {
			if _, bad := podErr[k]; bad || me.failedOrigin[old.Origin] {
				next[k] = old
			}
		}
	}
	for k, p := range next {
		msg := podErr[k]
		if p.Error != msg {
			p = withError(p, msg)
		}
		if p != stored[k] {
			write = append(write, p)
		}
	}
	sort.Slice(write, func(a, b int) bool { return write[a].Key < write[b].Key })
	c.Pods = write
	return c, nil
}
