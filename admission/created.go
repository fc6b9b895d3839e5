package admission

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

// createdAt is when pod uid of source was first accepted, as the
// containers berth made for it record it (runtime.LabelPodCreated): the
// earliest of ctrs (those of the pod's key) hold, never after now. A pod
// that berth ran before it restarted, whose containers the engine still
// lists, thus keeps its creationTimestamp and startTime (and its
// activeDeadlineSeconds counts from it, as the kubelet's). ok is false
// when no container of that UID and source records a time.
func createdAt(ctrs []*model.Container, source string, uid types.UID, now time.Time) (at time.Time, ok bool) {
	for _, c := range ctrs {
		if c.PodUID != string(uid) || c.Source != source {
			continue
		}
		l, _ := runtime.DecodeLabels(c.Labels) // a malformed label decodes as unset
		if t := l.PodCreated; !t.IsZero() && (at.IsZero() || t.Before(at)) {
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
