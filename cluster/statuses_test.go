package cluster

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
)

// refresh renders a pod object once: later refreshes render only pods added
// or changed, and report the keys of pods gone, wherever they are in the
// key order.
func TestStatusCacheRendersChangedPodsOnly(t *testing.T) {
	renders := 0
	c := statusCache{prefix: "/s/", status: func(p *model.Pod) v1.PodStatus { renders++; return p.Status }}
	var changed, gone []string
	refresh := func(pods ...*model.Pod) {
		changed, gone, renders = nil, nil, 0
		c.refresh(pods, func(k string, _ keyValue) { changed = append(changed, k) }, func(k string) { gone = append(gone, k) })
	}
	a, b, d, e := testPod("a", v1.PodPending), testPod("b", v1.PodPending), testPod("d", v1.PodPending), testPod("e", v1.PodPending)
	refresh(a, b, d, e)
	if renders != 4 || len(changed) != 4 {
		t.Fatalf("first refresh rendered %d, changed %v", renders, changed)
	}
	refresh(a, b, d, e)
	if renders != 0 || changed != nil || gone != nil {
		t.Fatalf("unchanged pods: rendered %d, changed %v, gone %v", renders, changed, gone)
	}
	b2 := testPod("b", v1.PodRunning)
	cc := testPod("c", v1.PodPending)
	refresh(b2, cc, e)
	if renders != 2 || !slices.Equal(changed, []string{"/s/default/b", "/s/default/c"}) || !slices.Equal(gone, []string{"/s/default/a", "/s/default/d"}) {
		t.Fatalf("rendered %d, changed %v, gone %v; want 2, b and c, a and d", renders, changed, gone)
	}
	refresh(b2, cc)
	if renders != 0 || changed != nil || !slices.Equal(gone, []string{"/s/default/e"}) {
		t.Fatalf("last pod removed: rendered %d, changed %v, gone %v", renders, changed, gone)
	}
	var keys []string
	c.each(func(k string, kv keyValue) { keys = append(keys, k+"="+string(kv.phase)) })
	if !slices.Equal(keys, []string{"/s/default/b=Running", "/s/default/c=Pending"}) {
		t.Errorf("cache holds %v", keys)
	}
}

func TestUrgentChange(t *testing.T) {
	pending := keyValue{ok: true, phase: v1.PodPending, ready: v1.ConditionFalse}
	running := keyValue{ok: true, phase: v1.PodRunning, ready: v1.ConditionTrue, sandbox: v1.ConditionTrue}
	noIP := keyValue{ok: true, phase: v1.PodRunning, ready: v1.ConditionTrue, sandbox: v1.ConditionFalse}
	for _, tc := range []struct {
		name     string
		was, now keyValue
		want     bool
	}{
		{"new pod Pending", keyValue{}, pending, false},
		{"new pod Running", keyValue{}, running, true},
		{"Pending to Running", pending, running, true},
		{"restart count, still Running", running, running, false},
		{"Running to Failed", running, keyValue{ok: true, phase: v1.PodFailed, ready: v1.ConditionFalse}, true},
		{"Running to Pending (not ready again)", running, pending, true},
		{"ready, still Running", keyValue{ok: true, phase: v1.PodRunning, ready: v1.ConditionFalse, sandbox: v1.ConditionTrue}, running, true},
		{"Running, its IP not known yet", pending, noIP, false},
		{"then its IP known", noIP, running, true},
		{"Succeeded, sandbox gone", running, keyValue{ok: true, phase: v1.PodSucceeded, sandbox: v1.ConditionFalse}, true},
	} {
		if got := urgentChange(tc.was, tc.now); got != tc.want {
			t.Errorf("%s: urgent %v, want %v", tc.name, got, tc.want)
		}
	}
}
