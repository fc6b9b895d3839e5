package images

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/internal/backoff"
	"github.com/berth-dev/berth/pause"
	"github.com/berth-dev/berth/runtime/fake"
)

// The sandbox image's repositories are never pulled for a pod, whatever
// its pull policy: a present image is used as it is, an absent one waits
// as ErrImageNeverPull. Other images are pulled as their policy says.
func TestSandboxRepositoriesNeverPulled(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt := fake.New(clk.Now)
	rt.AddImage("berth/pause:1")
	rec := &recorder{}
	m := New(Config{Engine: rt, Clock: clk, Backoff: backoff.Policy{Initial: 10 * time.Second, Max: time.Minute},
		Metrics: rec, Event: rec.event, Enqueue: rec.enqueue, Reserved: pause.Reserved("registry.example/pause:3.9")})
	for i, tc := range []struct {
		image  string
		policy v1.PullPolicy
		ready  bool
	}{
		{"berth/pause:1", v1.PullAlways, true},
		{"docker.io/berth/pause:2", v1.PullAlways, false},
		{"berth/pause:2", v1.PullAlways, false},
		{"berth/pause:2", v1.PullIfNotPresent, false},
		{"registry.example/pause:3.9", v1.PullAlways, false},
	} {
		ctr := &v1.Container{Name: "a", Image: tc.image, ImagePullPolicy: tc.policy}
		key := "uid" + string(rune('0'+i)) + "/a"
		ready, wait, _, err := m.Ensure(context.Background(), "default/web", key, ctr, nil)
		if err != nil || ready != tc.ready {
			t.Errorf("%s %s: ready %v err %v, want ready %v", tc.image, tc.policy, ready, err, tc.ready)
		}
		if !tc.ready && (wait.Reason != "ErrImageNeverPull" || !strings.Contains(wait.Message, "never pulls the pod sandbox image's repository")) {
			t.Errorf("%s %s: wait %+v, want ErrImageNeverPull naming the sandbox repository", tc.image, tc.policy, wait)
		}
	}
	m.Wait()
	if n := rt.CallCount("PullImage"); n != 0 {
		t.Errorf("%d pulls of the sandbox repositories", n)
	}
	ctr := &v1.Container{Name: "a", Image: "app:1", ImagePullPolicy: v1.PullAlways}
	if _, wait, _, _ := m.Ensure(context.Background(), "default/web", "other/a", ctr, nil); wait.Reason != "ContainerCreating" {
		t.Errorf("another image with policy Always: wait %+v, want its pull", wait)
	}
	m.Wait()
	if n := rt.CallCount("PullImage"); n != 1 {
		t.Errorf("%d pulls of another image, want 1", n)
	}
}
