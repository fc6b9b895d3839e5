package informer

import (
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

// applied is what the informer last applied of a source: its update's pods
// and objects, and whether admission took them whole (no manifest error,
// refusal or warning), so that the store holds exactly those pods as
// offered and the next update can be decided by its difference.
type applied struct {
	pods    []manifest.Desired
	objects []manifest.Object
	whole   bool
}

// podDelta compares the pods of a source's update with its previous
// update's, both grouped by origin in ascending origin order (as the etcd
// source sends them): changed are the indexes in cur of pods that are not
// the object sent before under the same origin, removed the keys of prev's
// pods that cur does not offer. ok is false when the origins are out of
// order: compare everything then. An unchanged pod costs a pointer compare.
func podDelta(prev, cur []manifest.Desired) (changed []int, removed []string, ok bool) {
	return delta(prev, cur, func(d manifest.Desired) string { return d.Origin }, podKey,
		func(a, b manifest.Desired) bool { return a.Pod == b.Pod && a.Origin == b.Origin })
}

// delta is podDelta over items of any kind: origin, key and same say
// where an item came from, what it is called, and whether two are the
// same object.
func delta[T any](prev, cur []T, origin, key func(T) string, same func(a, b T) bool) (changed []int, removed []string, ok bool) {
	var gone []string
	i, j := 0, 0
	for i < len(prev) || j < len(cur) {
		if i < len(prev) && j < len(cur) && same(prev[i], cur[j]) {
			i, j = i+1, j+1
			continue
		}
		if j > 0 && j < len(cur) && origin(cur[j]) < origin(cur[j-1]) {
			return nil, nil, false
		}
		switch {
		case j == len(cur) || (i < len(prev) && origin(prev[i]) < origin(cur[j])):
			for o := origin(prev[i]); i < len(prev) && origin(prev[i]) == o; i++ {
				gone = append(gone, key(prev[i]))
			}
		case i == len(prev) || origin(cur[j]) < origin(prev[i]):
			for o := origin(cur[j]); j < len(cur) && origin(cur[j]) == o; j++ {
				changed = append(changed, j)
			}
		default: // the same origin with other objects: all of it again
			o := origin(cur[j])
			for ; i < len(prev) && origin(prev[i]) == o; i++ {
				gone = append(gone, key(prev[i]))
			}
			for ; j < len(cur) && origin(cur[j]) == o; j++ {
				changed = append(changed, j)
			}
		}
	}
	if len(gone) == 0 {
		return changed, nil, true
	}
	offered := make(map[string]bool, len(changed))
	for _, c := range changed {
		offered[key(cur[c])] = true
	}
	for _, k := range gone {
		if !offered[k] {
			removed = append(removed, k)
		}
	}
	return changed, removed, true
}

func podKey(d manifest.Desired) string { return manifest.PodKey(d.Pod.Namespace, d.Pod.Name) }

// sameObjects reports whether a and b are the same object declarations.
func sameObjects(a, b []manifest.Object) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// samePods reports whether a and b offer the same pod objects from the
// same origins, in the same order.
func samePods(a, b []manifest.Desired) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Pod != b[i].Pod || a[i].Origin != b[i].Origin {
			return false
		}
	}
	return true
}

// objectDelta is podDelta for objects: changed are the indexes in cur of
// objects that are not the ones sent before under the same origin, removed
// the refs (model.ObjectRef) of prev's objects that cur does not offer. ok
// is false when the origins are out of order. An unchanged object costs a
// compare of its pointers.
func objectDelta(prev, cur []manifest.Object) (changed []int, removed []string, ok bool) {
	return delta(prev, cur, func(o manifest.Object) string { return o.Origin }, objectRef,
		func(a, b manifest.Object) bool { return a == b })
}

func objectRef(o manifest.Object) string { return model.ObjectRef(o.Kind, o.Key()) }
