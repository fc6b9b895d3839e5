package podconfig

import (
	"testing"
	"time"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

// Every container of a pod, its sandbox too, carries the pod's creation
// time, so that a restarted berth finds it again.
func TestPodCreatedLabel(t *testing.T) {
	c := mapper(t)
	p := specPod(nil)
	p.SeenAt = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for name, labels := range map[string]map[string]string{
		"sandbox": c.labels(p, model.SandboxName, "h", 0, 0).Encode(),
		"app":     c.containerLabels(p, &p.Spec.Spec.Containers[0], "sb1", 0, 0),
	} {
		l, err := runtime.DecodeLabels(labels)
		if err != nil || !l.PodCreated.Equal(p.SeenAt) {
			t.Errorf("%s: created %v (%v), want %v; labels %v", name, l.PodCreated, err, p.SeenAt, labels)
		}
	}
}
