package admission

import (
	"fmt"
	"strings"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

// ObjectChange is AdmitObjectsChanged's decision: only what differs from
// the store.
type ObjectChange struct {
	// Objects are the objects to write (store.SourceWrite Partial): the
	// admitted new and changed ones, and the refused changed ones as
	// stored with Error set.
	Objects []*model.Object
	// Removed are the source's stored objects to delete.
	Removed []*model.Object
	// Errors are the refusals; Refused the same by object ref.
	Errors  []string
	Refused map[string]string
}

// AdmitObjectsChanged decides u as Admit decides its objects when the
// source's previous update was admitted whole (so the store holds its pods
// and objects as offered) and u has no manifest error and the same pods:
// changed are the indexes in u.Objects of the ConfigMaps and Secrets that
// are not the objects offered before, removed the refs (model.ObjectRef)
// of the objects offered before that u no longer has. Only those are
// looked up, so the cost does not grow with the source's other objects.
// ok is false when the change is not one it decides (a claim, whose
// access modes bear on pods, or a key offered twice): decide with Admit
// then.
func AdmitObjectsChanged(v View, u Update, changed []int, removed []string) (c ObjectChange, ok bool, err error) {
	offered := make(map[string]bool, len(changed))
	for _, i := range changed {
		o := u.Objects[i]
		if o.Kind != model.KindConfigMap && o.Kind != model.KindSecret {
			return ObjectChange{}, false, nil
		}
		ref := model.ObjectRef(o.Kind, o.Key())
		if offered[ref] {
			return ObjectChange{}, false, nil
		}
		offered[ref] = true
	}
	for _, ref := range removed {
		if offered[ref] {
			continue
		}
		kind, key, _ := strings.Cut(ref, "/")
		if kind != model.KindConfigMap && kind != model.KindSecret {
			return ObjectChange{}, false, nil
		}
		cur, err := v.Object(kind, key)
		if err != nil {
			return ObjectChange{}, false, err
		}
		if cur != nil && cur.Source == u.Source {
			c.Removed = append(c.Removed, cur)
		}
	}
	for _, i := range changed {
		o := u.Objects[i]
		key := o.Key()
		cur, err := v.Object(o.Kind, key)
		if err != nil {
			return ObjectChange{}, false, err
		}
		refuse := func(msg string) {
			e := manifest.ManifestError{Origin: o.Origin, Kind: o.Kind, PodKey: key, Err: msg}
			c.Errors = append(c.Errors, e.Error())
			if c.Refused == nil {
				c.Refused = map[string]string{}
			}
			c.Refused[model.ObjectRef(o.Kind, key)] = e.Error()
			if cur != nil && cur.Source == u.Source {
				c.Objects = append(c.Objects, withObjectError(cur, e.Error()))
			}
		}
		switch {
		case cur != nil && cur.Source != u.Source:
			refuse(fmt.Sprintf("%s already provided by source %q", strings.ToLower(o.Kind), cur.Source))
		case cur != nil && cur.Origin == o.Origin && sameObject(cur, o):
			if cur.Error != "" {
				c.Objects = append(c.Objects, withObjectError(cur, ""))
			}
		case cur != nil && cur.Immutable() && !sameObject(cur, o):
			refuse("field is immutable when `immutable` is set: delete and re-create it to change it")
		default:
			c.Objects = append(c.Objects, &model.Object{Kind: o.Kind, Key: key, Ref: model.ObjectRef(o.Kind, key), Source: u.Source,
				Origin: o.Origin, ConfigMap: o.ConfigMap, Secret: o.Secret, PVC: o.PVC})
		}
	}
	return c, true, nil
}
