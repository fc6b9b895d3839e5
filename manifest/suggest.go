package manifest

import (
	"reflect"
	"sort"
	"strings"

	"github.com/berth-dev/berth/internal/editdist"
	"github.com/berth-dev/berth/internal/jsonfield"
)

// suggestField returns the known JSON field name closest to the unknown
// field at path (as sigs.k8s.io/json writes it: spec.containers[0].imagee)
// in documents that decode into t, or "" when none is close: a name equal
// but for case, or within maxEdits(name) edits.
func suggestField(t reflect.Type, path string) string {
	parent, name := "", path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		parent, name = path[:i], path[i+1:]
	}
	st := typeAt(t, parent)
	if st == nil {
		return ""
	}
	known := make([]string, 0, len(jsonFields(st)))
	for k := range jsonFields(st) {
		known = append(known, k)
	}
	sort.Strings(known)
	best, bestD := "", maxEdits(name)+1
	for _, k := range known {
		if d := editdist.Distance(strings.ToLower(name), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// maxEdits is how far a misspelling of a name of n letters may be from the
// name: 1 edit up to 5 letters, 2 up to 10, then 3.
func maxEdits(name string) int {
	switch n := len(name); {
	case n <= 5:
		return 1
	case n <= 10:
		return 2
	}
	return 3
}

// typeAt returns the struct type that holds the fields at path (dotted JSON
// names with [i] indexes) of documents of type t, or nil.
func typeAt(t reflect.Type, path string) reflect.Type {
	t = jsonfield.Elem(t)
	if path != "" {
		for _, seg := range strings.Split(path, ".") {
			if i := strings.IndexByte(seg, '['); i >= 0 {
				seg = seg[:i]
			}
			if t.Kind() != reflect.Struct {
				return nil
			}
			ft, ok := jsonFields(t)[seg]
			if !ok {
				return nil
			}
			t = jsonfield.Elem(ft)
		}
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	return t
}
