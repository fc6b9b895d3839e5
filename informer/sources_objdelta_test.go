package informer

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/store"
)

func cmObject(origin, name, value string, immutable bool) manifest.Object {
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Data: map[string]string{"v": value}}
	if immutable {
		cm.Immutable = &immutable
	}
	return manifest.Object{Kind: model.KindConfigMap, ConfigMap: cm, Origin: origin}
}

func TestObjectDelta(t *testing.T) {
	a, b, c, c2 := cmObject("1", "a", "", false), cmObject("2", "b", "", false), cmObject("3", "c", "", false), cmObject("3", "c", "2", false)
	for _, tc := range []struct {
		name      string
		prev, cur []manifest.Object
		changed   []int
		removed   []string
		ok        bool
	}{
		{"same", []manifest.Object{a, b, c}, []manifest.Object{a, b, c}, nil, nil, true},
		{"added in the middle", []manifest.Object{a, c}, []manifest.Object{a, b, c}, []int{1}, nil, true},
		{"removed", []manifest.Object{a, b, c}, []manifest.Object{a, c}, nil, []string{"ConfigMap/default/b"}, true},
		{"changed", []manifest.Object{a, b, c}, []manifest.Object{a, b, c2}, []int{2}, nil, true},
		{"moved to another origin", []manifest.Object{a, b}, []manifest.Object{a, cmObject("9", "b", "", false)}, []int{1}, nil, true},
		{"out of order", []manifest.Object{a, b}, []manifest.Object{c, a}, nil, nil, false},
	} {
		changed, removed, ok := objectDelta(tc.prev, tc.cur)
		if ok != tc.ok || (ok && (!slices.Equal(changed, tc.changed) || !slices.Equal(removed, tc.removed))) {
			t.Errorf("%s: changed %v removed %v ok %v; want %v %v %v", tc.name, changed, removed, ok, tc.changed, tc.removed, tc.ok)
		}
	}
}

// A source's updates that change only ConfigMaps and Secrets, decided by
// their difference (AdmitObjectsChanged, partial writes), leave the store
// as deciding each update whole does: the same object rows, errors and
// source errors after every step, through additions, edits, removals, a
// key another source holds, an immutable object edited and a move to
// another origin.
func TestApplyObjectsByDifferenceEqualsWhole(t *testing.T) {
	type run struct {
		inf *SourceInformer
		st  *store.Store
	}
	newRun := func() run {
		st, err := store.New(func(string) {})
		if err != nil {
			t.Fatal(err)
		}
		return run{NewSourceInformer(st, nil, nil, nil), st}
	}
	delta, whole := newRun(), newRun()
	decoded := map[string]manifest.Object{}
	put := func(origin, name, value string, immutable bool) {
		decoded[origin] = cmObject(origin, name, value, immutable)
	}
	pods := []manifest.Desired{pod("p", "img:1", 0)}
	pods[0].Origin = "k/p"
	update := func() sources.Update {
		u := sources.Update{Source: "push", Pods: pods}
		for _, o := range slices.Sorted(func(yield func(string) bool) {
			for k := range decoded {
				if !yield(k) {
					return
				}
			}
		}) {
			u.Objects = append(u.Objects, decoded[o])
		}
		return u
	}
	for _, r := range []run{delta, whole} {
		mustApply(t, r.inf, sources.Update{Source: "file", Objects: []manifest.Object{cmObject("/f/x", "x", "file", false)}})
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"a, b", func() { put("k/a", "a", "1", false); put("k/b", "b", "1", false) }},
		{"c added", func() { put("k/c", "c", "1", false) }},
		{"b edited", func() { put("k/b", "b", "2", false) }},
		{"a removed", func() { delete(decoded, "k/a") }},
		{"x taken by file", func() { put("k/x", "x", "push", false) }},
		{"x removed", func() { delete(decoded, "k/x") }},
		{"d immutable", func() { put("k/d", "d", "1", true) }},
		{"d edited", func() { put("k/d", "d", "2", true) }},
		{"d back", func() { put("k/d", "d", "1", true) }},
		{"e added", func() { put("k/e", "e", "1", false) }},
		{"c moved to another origin", func() { delete(decoded, "k/c"); put("k/z", "c", "1", false) }},
		{"b decoded again, equal", func() { put("k/b", "b", "2", false) }},
		{"everything but b", func() {
			for k := range decoded {
				if k != "k/b" {
					delete(decoded, k)
				}
			}
		}},
	}
	for _, step := range steps {
		step.do()
		u := update()
		mustApply(t, delta.inf, u)
		whole.inf.last = map[string]*applied{}
		mustApply(t, whole.inf, u)
		want, got := describeObjects(t, whole.st), describeObjects(t, delta.st)
		if got != want {
			t.Fatalf("after %q:\nby difference:\n%s\nwhole:\n%s", step.name, got, want)
		}
	}
	if delta.inf.partial == 0 {
		t.Error("no update was decided by its difference")
	}
	t.Logf("%d of %d updates decided by their difference", delta.inf.partial, len(steps))
}

// describeObjects is every object (kind, key, source, origin, data,
// error), every pod and every source's errors, as text.
func describeObjects(t *testing.T, st *store.Store) string {
	t.Helper()
	var b strings.Builder
	for _, kind := range model.ObjectKinds {
		objs, err := st.Snapshot().Objects(nil, kind)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			var data map[string]string
			if o.ConfigMap != nil {
				data = o.ConfigMap.Data
			}
			fmt.Fprintf(&b, "%s %s %s %s %v %q\n", o.Kind, o.Key, o.Source, o.Origin, data, o.Error)
		}
	}
	return b.String() + describeStore(t, st)
}
