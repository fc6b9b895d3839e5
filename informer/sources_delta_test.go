package informer

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/admission"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/store"
)

func TestPodDelta(t *testing.T) {
	d := func(origin, name string) manifest.Desired {
		p := pod(name, "img", 0)
		p.Origin = origin
		return p
	}
	a, b, c, c2, l1, l2 := d("1", "a"), d("2", "b"), d("3", "c"), d("3", "c"), d("4", "l1"), d("4", "l2")
	for _, tc := range []struct {
		name      string
		prev, cur []manifest.Desired
		changed   []int
		removed   []string
		ok        bool
	}{
		{"same", []manifest.Desired{a, b, c}, []manifest.Desired{a, b, c}, nil, nil, true},
		{"added in the middle", []manifest.Desired{a, c}, []manifest.Desired{a, b, c}, []int{1}, nil, true},
		{"removed", []manifest.Desired{a, b, c}, []manifest.Desired{a, c}, nil, []string{"default/b"}, true},
		{"changed", []manifest.Desired{a, b, c}, []manifest.Desired{a, b, c2}, []int{2}, nil, true},
		{"a list key lost one pod", []manifest.Desired{a, l1, l2}, []manifest.Desired{a, d("4", "l2")}, []int{1}, []string{"default/l1"}, true},
		{"moved to another key", []manifest.Desired{a, b}, []manifest.Desired{a, d("9", "b")}, []int{1}, nil, true},
		{"all new", nil, []manifest.Desired{a, b}, []int{0, 1}, nil, true},
		{"out of order", []manifest.Desired{a, b}, []manifest.Desired{c, a}, nil, nil, false},
	} {
		changed, removed, ok := podDelta(tc.prev, tc.cur)
		if ok != tc.ok || (ok && (!slices.Equal(changed, tc.changed) || !slices.Equal(removed, tc.removed))) {
			t.Errorf("%s: changed %v removed %v ok %v; want %v %v %v", tc.name, changed, removed, ok, tc.changed, tc.removed, tc.ok)
		}
	}
}

// A source's updates decided by their difference (AdmitChanged, partial
// writes) leave the store as deciding each update whole (Admit) does: the
// same pod objects, errors and source errors after every step, through
// additions, edits, removals, refusals of every kind, a refused edit kept
// on its last good spec, a re-decoded equal spec and a pod moved to another
// key.
func TestApplyByDifferenceEqualsWhole(t *testing.T) {
	node := &admission.Node{Name: "n", OS: "linux", CPUMilli: 4000, Memory: 1 << 34}
	type run struct {
		inf *SourceInformer
		st  *store.Store
	}
	newRun := func() run {
		st, err := store.New(func(string) {})
		if err != nil {
			t.Fatal(err)
		}
		inf := NewSourceInformer(st, nil, nil, nil)
		inf.Node = node
		return run{inf, st}
	}
	delta, whole := newRun(), newRun()
	// Each origin's pod is decoded once, as the etcd source keeps it.
	decoded := map[string]manifest.Desired{}
	put := func(origin, name string, port int32, mutate func(*v1.Pod)) {
		d := pod(name, "img:1", port)
		d.Origin = origin
		if mutate != nil {
			mutate(d.Pod)
		}
		decoded[origin] = d
	}
	update := func() sources.Update {
		var u sources.Update
		u.Source = "etcd"
		for _, o := range slices.Sorted(func(yield func(string) bool) {
			for k := range decoded {
				if !yield(k) {
					return
				}
			}
		}) {
			u.Pods = append(u.Pods, decoded[o])
		}
		return u
	}
	other := pod("x", "img:1", 9)
	for _, r := range []run{delta, whole} {
		mustApply(t, r.inf, sources.Update{Source: "file", Pods: []manifest.Desired{other}})
	}
	sameUID := func(uid string) func(*v1.Pod) { return func(p *v1.Pod) { p.UID = types.UID(uid) } }
	ended := func(key string) func(*store.Store) {
		return func(st *store.Store) {
			if _, err := st.UpdatePod(key, func(p *model.Pod) bool { p.Terminal = v1.PodSucceeded; return true }); err != nil {
				t.Fatal(err)
			}
		}
	}
	// meanwhile changes both stores before a step, as the controller would.
	meanwhile := map[string]func(*store.Store){"big3 ended; a pod of its size fits": ended("default/big3")}
	steps := []struct {
		name string
		do   func()
	}{
		{"a, b, c", func() { put("k/a", "a", 1, nil); put("k/b", "b", 2, nil); put("k/c", "c", 3, nil) }},
		{"d added", func() { put("k/d", "d", 4, nil) }},
		{"b edited", func() { put("k/b", "b", 2, func(p *v1.Pod) { p.Spec.Containers[0].Image = "img:2" }) }},
		{"c removed", func() { delete(decoded, "k/c") }},
		{"e takes file's port", func() { put("k/e", "e", 9, nil) }},
		{"e removed", func() { delete(decoded, "k/e") }},
		{"f takes a's UID", func() { put("k/f", "f", 0, sameUID("uid-a")) }},
		{"f removed", func() { delete(decoded, "k/f") }},
		{"g takes file's pod key", func() { put("k/g", "x", 0, nil) }},
		{"g removed", func() { delete(decoded, "k/g") }},
		{"a edited onto b's port", func() { put("k/a", "a", 2, nil) }},
		{"a fixed", func() { put("k/a", "a", 1, nil) }},
		{"b decoded again, equal", func() {
			put("k/b", "b", 2, func(p *v1.Pod) { p.Spec.Containers[0].Image = "img:2" })
		}},
		{"d moved to another key", func() { delete(decoded, "k/d"); put("k/z", "d", 4, nil) }},
		{"h and i on one port", func() { put("k/h", "h", 5, nil); put("k/i", "i", 5, nil) }},
		{"i gone", func() { delete(decoded, "k/i") }},
		{"m on a new port", func() { put("k/m", "m", 7, nil) }},
		{"n onto m's port", func() { put("k/n", "n", 7, nil) }},
		{"n gone", func() { delete(decoded, "k/n") }},
		{"m gone", func() { delete(decoded, "k/m") }},
		{"o onto the port m left", func() { put("k/o", "o", 7, nil) }},
		{"q takes o's UID", func() { put("k/q", "q", 0, sameUID("uid-o")) }},
		{"q gone", func() { delete(decoded, "k/q") }},
		{"big pod, most of the node", func() {
			put("k/big", "big", 0, func(p *v1.Pod) {
				p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: *resourceCPU(3000)}
			})
		}},
		{"another big pod, beyond the node", func() {
			put("k/big2", "big2", 0, func(p *v1.Pod) {
				p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: *resourceCPU(2000)}
			})
		}},
		{"big2 gone", func() { delete(decoded, "k/big2") }},
		{"big gone, a pod of its size fits", func() {
			delete(decoded, "k/big")
			put("k/big3", "big3", 0, func(p *v1.Pod) {
				p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: *resourceCPU(3000)}
			})
		}},
		{"big3 ended; a pod of its size fits", func() {
			put("k/big4", "big4", 0, func(p *v1.Pod) {
				p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: *resourceCPU(3000)}
			})
		}},
		{"too big for the node", func() {
			put("k/j", "j", 0, func(p *v1.Pod) {
				p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: *resourceCPU(5000)}
			})
		}},
		{"everything but a", func() {
			for k := range decoded {
				if k != "k/a" {
					delete(decoded, k)
				}
			}
		}},
	}
	for _, step := range steps {
		if m := meanwhile[step.name]; m != nil {
			m(delta.st)
			m(whole.st)
		}
		step.do()
		u := update()
		mustApply(t, delta.inf, u)
		whole.inf.last = map[string]*applied{}
		mustApply(t, whole.inf, u)
		want, got := describeStore(t, whole.st), describeStore(t, delta.st)
		if got != want {
			t.Fatalf("after %q:\nby difference:\n%s\nwhole:\n%s", step.name, got, want)
		}
	}
	if delta.inf.partial == 0 {
		t.Error("no update was decided by its difference")
	}
	t.Logf("%d of %d updates decided by their difference", delta.inf.partial, len(steps))
}

func resourceCPU(milli int64) *resource.Quantity {
	return resource.NewMilliQuantity(milli, resource.DecimalSI)
}

// describeStore is every pod (key, source, origin, spec object, error) and
// every source's errors, as text.
func describeStore(t *testing.T, st *store.Store) string {
	t.Helper()
	pods, err := st.Pods(nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range pods {
		fmt.Fprintf(&b, "%s %s %s %p %q\n", p.Key, p.Source, p.Origin, p.Spec, p.Error)
	}
	srcs, err := st.Sources(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range srcs {
		fmt.Fprintf(&b, "source %s: %q\n", s.Name, s.Errors)
	}
	return b.String()
}
