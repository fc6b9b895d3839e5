package admission

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

// createdAt is when pod uid of source was first accepted, as the sandboxes
// berth made for it record it (runtime.LabelPodCreated): the earliest of
// ctrs (those of the pod's key) hold, never after the sandbox's own
// creation nor now. A pod that berth ran before it restarted, whose
// sandbox the engine still lists, thus keeps its creationTimestamp and
// startTime (and its activeDeadlineSeconds counts from it, as the
// kubelet's). Only sandboxes count: they run berth's pause image, whose
// labels no user's image can set. ok is false when none records a time.
func createdAt(ctrs []*model.Container, source string, uid types.UID, now time.Time) (at time.Time, ok bool) {
	for _, c := range ctrs {
		if c.PodUID != string(uid) || c.Source != source || c.Name != model.SandboxName {
			continue
		}
		l, _ := runtime.DecodeLabels(c.Labels) // a malformed label decodes as unset
		t := l.PodCreated
		if t.IsZero() {
			continue
		}
		if !c.CreatedAt.IsZero() && t.After(c.CreatedAt) {
			t = c.CreatedAt
		}
		if at.IsZero() || t.Before(at) {
			at = t
		}
	}
	if at.IsZero() {
		return time.Time{}, false
	}
	if at.After(now) {
		at = now
	}
	return at, true
}
