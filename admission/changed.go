package admission

import (
	"github.com/berth-dev/berth/manifest"
)

// AdmitChanged decides u by its difference from the source's previous
// update: changed are the indexes in u.Pods of the pods that are not the
// objects offered before, removed the keys of the pods offered before that
// u no longer has. It is decide with only those candidates: the whole
// update less the pods offered as they are stored, which hold what they
// hold through the store's indexes. The cost is that of the change.
//
// Misuse: the previous update must have been admitted whole (no error,
// refusal or warning: the store holds its pods as offered) and u must
// have no manifest error and the same objects. ok is false when a changed
// key is stored from another origin that u may still offer unchanged (the
// difference cannot tell a key offered twice): decide with Admit then.
func AdmitChanged(v View, u Update, changed []int, removed []string) (c Change, ok bool, err error) {
	gone := make(map[string]bool, len(removed))
	for _, k := range removed {
		gone[k] = true
	}
	for _, i := range changed {
		k := key(u.Pods[i])
		p, err := v.Pod(k)
		if err != nil {
			return Change{}, false, err
		}
		if p != nil && p.Source == u.Source && p.Origin != u.Pods[i].Origin && !gone[k] {
			return Change{}, false, nil
		}
	}
	c, err = decide(v, u, readErrors(u), changed, removed)
	if err != nil {
		return Change{}, false, err
	}
	offered := make([]manifest.Desired, 0, len(changed))
	for _, i := range changed {
		offered = append(offered, u.Pods[i])
	}
	c.Warnings = u.Node.warnings(offered)
	return c, true, nil
}
