package admission

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

// admitObjects decides the ConfigMaps and Secrets of u: one source per
// kind and key (the first keeps it), an immutable object is never changed
// (only removed), a refused or invalid update keeps the last good object
// with its error, and the objects of an origin that failed as a whole are
// kept. It returns the source's objects and the refusals, as lines and by
// object ref.
func admitObjects(v View, u Update, failedOrigin map[string]bool) ([]*model.Object, []string, map[string]string, error) {
	objErr := map[string]string{}
	for _, e := range u.Errors {
		if e.Kind != "" && e.PodKey != "" {
			objErr[model.ObjectRef(e.Kind, e.PodKey)] = e.Error()
		}
	}
	have := map[string]*model.Object{}
	for _, kind := range model.ObjectKinds {
		objs, err := v.ObjectsBySource(kind, u.Source)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, o := range objs {
			have[o.Ref] = o
		}
	}
	var refusals []string
	refused := map[string]string{}
	refuse := func(o manifest.Object, ref, msg string) {
		e := manifest.ManifestError{Origin: o.Origin, Kind: o.Kind, PodKey: o.Key(), Err: msg}
		refusals = append(refusals, e.Error())
		objErr[ref] = e.Error()
		refused[ref] = e.Error()
	}
	next := map[string]*model.Object{}
	for _, o := range u.Objects {
		key := o.Key()
		ref := model.ObjectRef(o.Kind, key)
		cur, err := v.Object(o.Kind, key)
		if err != nil {
			return nil, nil, nil, err
		}
		if cur != nil && cur.Source != u.Source {
			refuse(o, ref, fmt.Sprintf("%s already provided by source %q", strings.ToLower(o.Kind), cur.Source))
			continue
		}
		old := have[ref]
		if old != nil && old.Origin == o.Origin && sameObject(old, o) {
			next[ref] = withObjectError(old, "")
			continue
		}
		if old != nil && old.Immutable() && !sameObject(old, o) {
			refuse(o, ref, "field is immutable when `immutable` is set: delete and re-create it to change it")
			continue
		}
		next[ref] = &model.Object{Kind: o.Kind, Key: key, Ref: ref, Source: u.Source, Origin: o.Origin, ConfigMap: o.ConfigMap, Secret: o.Secret, PVC: o.PVC}
	}
	for ref, old := range have {
		if _, ok := next[ref]; ok {
			continue
		}
		if _, bad := objErr[ref]; bad || failedOrigin[old.Origin] {
			next[ref] = old
		}
	}
	out := make([]*model.Object, 0, len(next))
	for ref, o := range next {
		if msg := objErr[ref]; msg != o.Error {
			o = withObjectError(o, msg)
		}
		out = append(out, o)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Ref < out[b].Ref })
	return out, refusals, refused, nil
}

// sameObject reports whether stored o declares what offered n does.
func sameObject(o *model.Object, n manifest.Object) bool {
	switch {
	case o.ConfigMap != nil && n.ConfigMap != nil:
		return o.ConfigMap == n.ConfigMap || equality.Semantic.DeepEqual(o.ConfigMap, n.ConfigMap)
	case o.Secret != nil && n.Secret != nil:
		return o.Secret == n.Secret || equality.Semantic.DeepEqual(o.Secret, n.Secret)
	case o.PVC != nil && n.PVC != nil:
		return o.PVC == n.PVC || equality.Semantic.DeepEqual(o.PVC, n.PVC)
	}
	return false
}

func withObjectError(o *model.Object, msg string) *model.Object {
	if o.Error == msg {
		return o
	}
	cp := *o
	cp.Error = msg
	return &cp
}

// foreignRef refuses a pod that needs (without optional) a ConfigMap or
// Secret whose key another source holds: a pod may use only its own
// source's objects, and this one could never start.
func foreignRef(v View, source string, d manifest.Desired) (string, error) {
	for _, r := range manifest.References(d.Pod) {
		if r.Optional {
			continue
		}
		o, err := v.Object(r.Kind, manifest.PodKey(d.Pod.Namespace, r.Name))
		if err != nil {
			return "", err
		}
		if o != nil && o.Source != source {
			return fmt.Sprintf("%s: %s %q is declared by source %q; a pod may use only ConfigMaps and Secrets of its own source (%q)",
				refField(r), strings.ToLower(r.Kind), r.Name, o.Source, source), nil
		}
	}
	return "", nil
}

// refField names where a pod uses an object, for refusals.
func refField(r manifest.Ref) string {
	switch {
	case r.Volume != "":
		return fmt.Sprintf("spec.volumes[%s]", r.Volume)
	case r.Container != "":
		return fmt.Sprintf("spec.containers[%s].env", r.Container)
	}
	return "spec.imagePullSecrets"
}

// claimsOnce tracks the pods using ReadWriteOncePod claims, which admit
// one pod at a time, as the kubelet's volume manager does on its node:
// the store's pods (but those skip names), then the pods decided.
type claimsOnce struct {
	v       View
	skip    func(*model.Pod) bool
	offered map[string]*v1.PersistentVolumeClaim // this update's claims, by key
	users   map[string]string                    // claim key → pod key
}

func newClaimsOnce(v View, u Update, skip func(*model.Pod) bool) *claimsOnce {
	c := &claimsOnce{v: v, skip: skip, offered: map[string]*v1.PersistentVolumeClaim{}, users: map[string]string{}}
	for _, o := range u.Objects {
		if o.PVC != nil {
			c.offered[o.Key()] = o.PVC
		}
	}
	return c
}

// hold records that pod key uses its claims, those another holds aside.
func (c *claimsOnce) hold(key string, pod *v1.Pod) {
	for _, ck := range model.ClaimKeys(pod) {
		if _, ok := c.users[ck]; !ok {
			c.users[ck] = key
		}
	}
}

// user is the first pod using claim ck: in the store, else among the
// pods decided.
func (c *claimsOnce) user(ck string) (string, bool, error) {
	held, err := c.v.PodsByClaim(ck)
	if err != nil {
		return "", false, err
	}
	for _, p := range held {
		if !c.skip(p) {
			return p.Key, true, nil
		}
	}
	k, ok := c.users[ck]
	return k, ok, nil
}

// admit refuses pod key when it mounts a ReadWriteOncePod claim another
// pod holds; otherwise it holds the pod's claims.
func (c *claimsOnce) admit(key string, pod *v1.Pod) (string, error) {
	for _, ck := range model.ClaimKeys(pod) {
		other, used, err := c.user(ck)
		if err != nil {
			return "", err
		}
		if !used || other == key {
			continue
		}
		claim := c.offered[ck]
		if claim == nil {
			o, err := c.v.Object(model.KindPVC, ck)
			if err != nil {
				return "", err
			}
			if o != nil {
				claim = o.PVC
			}
		}
		if claim != nil && slices.Contains(claim.Spec.AccessModes, v1.ReadWriteOncePod) {
			return fmt.Sprintf("persistentvolumeclaim %q is ReadWriteOncePod and already used by pod %s", claim.Name, other), nil
		}
	}
	c.hold(key, pod)
	return "", nil
}
