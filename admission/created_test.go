package admission

import (
	"testing"
	"time"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

// A pod berth ran before it restarted keeps the creation time its
// containers record (the earliest of its UID and source); a pod of another
// UID or source, or without the label, is created now, as is one whose
// recorded time lies ahead.
func TestCreationTimeFromContainers(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	then := now.Add(-48 * time.Hour)
	label := func(at time.Time) map[string]string {
		return runtime.ContainerLabels{PodCreated: at}.Encode()
	}
	ctr := func(uid, source string, labels map[string]string) *model.Container {
		return &model.Container{ID: uid + source, PodUID: uid, Source: source, State: model.StateRunning, Labels: labels}
	}
	v := view{sources: map[string]*model.Source{"file": {Name: "file", Synced: true}}, ctrs: map[string][]*model.Container{
		"default/web":     {ctr("uid-web", "file", label(then.Add(time.Hour))), ctr("uid-web", "file", label(then)), ctr("uid-web", "file", nil)},
		"default/other":   {ctr("uid-previous", "file", label(then)), ctr("uid-other", "http", label(then))},
		"default/bare":    {ctr("uid-bare", "file", map[string]string{runtime.LabelPodCreated: "yesterday"})},
		"default/ahead":   {ctr("uid-ahead", "file", label(now.Add(time.Hour)))},
		"default/unknown": nil,
	}}
	var pods []manifest.Desired
	for _, n := range []string{"web", "other", "bare", "ahead", "unknown"} {
		pods = append(pods, desired(n, false))
	}
	d, err := Admit(v, Update{Source: "file", Pods: pods, Now: now})
	if err != nil || len(d.Pods) != len(pods) {
		t.Fatalf("admitted %d, %v %v", len(d.Pods), err, d.Errors)
	}
	want := map[string]time.Time{"default/web": then, "default/other": now, "default/bare": now, "default/ahead": now, "default/unknown": now}
	for _, p := range d.Pods {
		if !p.SeenAt.Equal(want[p.Key]) {
			t.Errorf("%s: created %v, want %v", p.Key, p.SeenAt, want[p.Key])
		}
		// A restored pod counts as started: its start is not timed again;
		// its startTime is served before its first status.
		if restored := p.Key == "default/web" || p.Key == "default/ahead"; restored == p.StartedAt.IsZero() ||
			restored != (p.Status.StartTime != nil && p.Status.StartTime.Time.Equal(p.SeenAt)) {
			t.Errorf("%s: started at %v, startTime %v: want both set only when restored", p.Key, p.StartedAt, p.Status.StartTime)
		}
	}

	// Stored, the pod keeps its time through an edit; the containers are
	// not read again.
	v.pods = d.Pods
	edited := desired("web", false)
	edited.Pod.Spec.Containers[0].Image = "img:2"
	v.ctrs["default/web"] = nil
	d, err = Admit(v, Update{Source: "file", Pods: []manifest.Desired{edited}, Now: now.Add(time.Minute)})
	if err != nil || len(d.Pods) != 1 || !d.Pods[0].SeenAt.Equal(then) {
		t.Fatalf("after an edit: %+v %v %v", d.Pods, err, d.Errors)
	}
}
