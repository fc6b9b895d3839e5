package sources

import (
	"slices"
	"strings"

	"github.com/berth-dev/berth/manifest"
)

// originEntry is what one origin (an etcd key, a pushed file) declares.
type originEntry struct {
	// value is the origin's content when the source compares it with the
	// next one (etcd); nil otherwise.
	value []byte
	// size is the length of the origin's manifest, charged to the
	// source's bytes quota.
	size    int64
	decoded manifest.Decoded
}

// usage is what the entry charges to its source's quota.
func (e *originEntry) usage() usage {
	return usage{pods: int64(len(e.decoded.Pods)), objects: int64(len(e.decoded.Objects)), bytes: e.size}
}

// origins are a source's decoded origins by key (an EtcdSource's keys, a
// PushSource's files), with the keys in byte order, a count of the pod and
// object keys declared by more than one of them, and the quota usage of
// them all, kept as entries come and go, so that a snapshot costs a slice
// append per pod and runs the duplicate check only when there is a
// duplicate. Decoded pods are shared with the updates sent and never
// mutated.
type origins struct {
	byKey map[string]*originEntry
	// keys in byte order, and their entries in the same order.
	keys    []string
	ordered []*originEntry
	// used is the sum of the entries' usage (their pods, objects, sizes).
	used usage
	// claims counts the entries declaring each pod key ("pod ns/name") and
	// object key ("<Kind> ns/name"); dups is how many have more than one.
	claims map[string]int
	dups   int
	// added and dropped are the pods of the entries set, and of those
	// replaced or removed, since the last takeChanges.
	added, dropped []manifest.Desired
}

func newOrigins() *origins {
	return &origins{byKey: map[string]*originEntry{}, claims: map[string]int{}}
}

func (s *origins) get(key string) *originEntry { return s.byKey[key] }

// sizeOf is the size of key's entry (0 when there is none).
func (s *origins) sizeOf(key string) int64 {
	if e := s.byKey[key]; e != nil {
		return e.size
	}
	return 0
}

// set makes e the entry of key.
func (s *origins) set(key string, e *originEntry) {
	i, found := slices.BinarySearch(s.keys, key)
	if found {
		old := s.ordered[i]
		s.claim(old, -1)
		s.dropped = append(s.dropped, old.decoded.Pods...)
		s.ordered[i] = e
	} else {
		s.keys = slices.Insert(s.keys, i, key)
		s.ordered = slices.Insert(s.ordered, i, e)
	}
	s.byKey[key] = e
	s.claim(e, 1)
	s.added = append(s.added, e.decoded.Pods...)
}

// remove drops key's entry, if any.
func (s *origins) remove(key string) {
	old := s.byKey[key]
	if old == nil {
		return
	}
	s.claim(old, -1)
	s.dropped = append(s.dropped, old.decoded.Pods...)
	delete(s.byKey, key)
	if i, ok := slices.BinarySearch(s.keys, key); ok {
		s.keys = slices.Delete(s.keys, i, i+1)
		s.ordered = slices.Delete(s.ordered, i, i+1)
	}
}

// claim adds d (1 or -1) to the claims of e's pods and objects.
func (s *origins) claim(e *originEntry, d int) {
	s.used = s.used.add(e.usage().times(int64(d)))
	count := func(k string) {
		n := s.claims[k] + d
		switch {
		case d > 0 && n == 2:
			s.dups++
		case d < 0 && n == 1:
			s.dups--
		}
		if n == 0 {
			delete(s.claims, k)
		} else {
			s.claims[k] = n
		}
	}
	for _, p := range e.decoded.Pods {
		count("pod " + manifest.PodKey(p.Pod.Namespace, p.Pod.Name))
	}
	for _, o := range e.decoded.Objects {
		count(strings.Join([]string{o.Kind, o.Key()}, " "))
	}
}

// snapshot is the full Update of the entries: pods, objects, errors and
// warnings in key order, a pod or object declared by two keys going to the
// first.
func (s *origins) snapshot(source string) Update {
	u := Update{Source: source}
	// Sized once: growing them by appends would copy the whole set over
	// again, a cost that grows with the set on every write.
	if s.used.pods > 0 {
		u.Pods = make([]manifest.Desired, 0, s.used.pods)
	}
	if s.used.objects > 0 {
		u.Objects = make([]manifest.Object, 0, s.used.objects)
	}
	for _, e := range s.ordered {
		u.Pods = append(u.Pods, e.decoded.Pods...)
		u.Objects = append(u.Objects, e.decoded.Objects...)
		u.Errors = append(u.Errors, e.decoded.Errors...)
		u.Warnings = append(u.Warnings, e.decoded.Warnings...)
	}
	if s.dups > 0 {
		var dups []manifest.ManifestError
		u.Pods, dups = dedupe(u.Pods)
		u.Errors = append(u.Errors, dups...)
		u.Objects, dups = dedupeObjects(u.Objects)
		u.Errors = append(u.Errors, dups...)
	}
	return u
}

// takeChanges returns the pods added since the last call that are still
// declared, and the pods dropped, and starts again.
func (s *origins) takeChanges() (added, dropped []manifest.Desired) {
	for _, d := range s.added {
		if e := s.byKey[d.Origin]; e != nil && slices.ContainsFunc(e.decoded.Pods, func(p manifest.Desired) bool { return p.Pod == d.Pod }) {
			added = append(added, d)
		}
	}
	dropped = s.dropped
	s.added, s.dropped = nil, nil
	return added, dropped
}
