package admission

import (
	"testing"
	"time"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

// A pod berth ran before it restarted keeps the creation time its
// sandboxes record (the earliest of its UID and source, never after the
// sandbox's own creation); a pod of another UID or source, or without the
// label, is created now, as is one whose recorded time lies ahead. An app
// container's label (an image can set it) counts for nothing, and once the
// source synced a new pod is created now whatever its sandbox says.
func TestCreationTimeFromContainers(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	then := now.Add(-48 * time.Hour)
	label := func(at time.Time) map[string]string {
		return runtime.ContainerLabels{PodCreated: at}.Encode()
	}
	n := 0
	ctr := func(uid, source string, labels map[string]string) *model.Container {
		n++
		return &model.Container{ID: uid + source + string(rune('a'+n)), Name: model.SandboxName, PodUID: uid, Source: source,
			State: model.StateRunning, Labels: labels, CreatedAt: now.Add(-time.Hour)}
	}
	app := ctr("uid-image", "file", label(then.Add(-time.Hour)))
	app.Name = "app"
	v := view{sources: map[string]*model.Source{"file": {Name: "file"}}, ctrs: map[string][]*model.Container{
		"default/web":     {ctr("uid-web", "file", label(then.Add(time.Hour))), ctr("uid-web", "file", label(then)), ctr("uid-web", "file", nil)},
		"default/other":   {ctr("uid-previous", "file", label(then)), ctr("uid-other", "http", label(then))},
		"default/bare":    {ctr("uid-bare", "file", map[string]string{runtime.LabelPodCreated: "yesterday"})},
		"default/ahead":   {ctr("uid-ahead", "file", label(now.Add(time.Hour)))},
		"default/image":   {app},
		"default/unknown": nil,
	}}
	var pods []manifest.Desired
	for _, n := range []string{"web", "other", "bare", "ahead", "image", "unknown"} {
		pods = append(pods, desired(n, false))
	}
	d, err := Admit(v, Update{Source: "file", Pods: pods, Now: now})
	if err != nil || len(d.Pods) != len(pods) {
		t.Fatalf("admitted %d, %v %v", len(d.Pods), err, d.Errors)
	}
	want := map[string]time.Time{"default/web": then, "default/other": now, "default/bare": now, "default/ahead": now.Add(-time.Hour),
		"default/image": now, "default/unknown": now}
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
	v.sources["file"].Synced = true
	edited := desired("web", false)
	edited.Pod.Spec.Containers[0].Image = "img:2"
	v.ctrs["default/web"] = nil
	d, err = Admit(v, Update{Source: "file", Pods: []manifest.Desired{edited}, Now: now.Add(time.Minute)})
	if err != nil || len(d.Pods) != 1 || !d.Pods[0].SeenAt.Equal(then) {
		t.Fatalf("after an edit: %+v %v %v", d.Pods, err, d.Errors)
	}
}

// Once its source synced, a pod deleted and made again while its old
// sandbox still stops (the same UID: it is derived from the name) is a new
// pod: created now, not when the old one was.
func TestRecreatedPodIsCreatedNow(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	sb := &model.Container{ID: "sb", Name: model.SandboxName, PodUID: string(desired("web", false).Pod.UID), Source: "file",
		State: model.StateRunning, CreatedAt: now.Add(-time.Hour), Labels: runtime.ContainerLabels{PodCreated: now.Add(-time.Hour)}.Encode()}
	v := view{sources: map[string]*model.Source{"file": {Name: "file", Synced: true}},
		ctrs: map[string][]*model.Container{"default/web": {sb}}}
	d, err := Admit(v, Update{Source: "file", Pods: []manifest.Desired{desired("web", false)}, Now: now})
	if err != nil || len(d.Pods) != 1 || !d.Pods[0].SeenAt.Equal(now) {
		t.Fatalf("%+v %v", d.Pods, err)
	}
}
