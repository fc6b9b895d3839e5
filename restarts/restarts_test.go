package restarts

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

func TestTrackerDecisions(t *testing.T) {
	tr := New(Backoff{Initial: 10 * time.Second, Max: 300 * time.Second, Reset: 10 * time.Minute}, clock.RealClock{})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if a, _, _ := decide(tr, v1.RestartPolicyNever, 1, t0, t0, t0); a != ActionNone {
		t.Error("Never restarted")
	}
	if a, _, _ := decide(tr, v1.RestartPolicyOnFailure, 0, t0, t0, t0); a != ActionNone {
		t.Error("OnFailure restarted a success")
	}
	if a, d, _ := decide(tr, v1.RestartPolicyAlways, 0, t0, t0, t0); a != ActionRestart || d != 0 {
		t.Fatal("first restart not immediate")
	}
	want := []time.Duration{10, 20, 40, 80, 160, 300, 300}
	for _, w := range want {
		tr.Restarted("k", time.Second)
		a, d, reason := decide(tr, v1.RestartPolicyAlways, 1, t0, t0.Add(time.Second), t0.Add(time.Second))
		if a != ActionWait || d != w*time.Second || reason != "CrashLoopBackOff" {
			t.Fatalf("got %v %v %q, want wait %v", a, d, reason, w*time.Second)
		}
	}
	// A run of 10 minutes resets the backoff.
	if a, d, _ := decide(tr, v1.RestartPolicyAlways, 1, t0, t0.Add(10*time.Minute), t0.Add(10*time.Minute)); a != ActionRestart || d != 0 {
		t.Fatal("long run did not reset the backoff")
	}
	tr.Restarted("k", 10*time.Minute)
	if d := tr.State("k").Delay; d != 10*time.Second {
		t.Fatalf("delay after reset %v, want 10s", d)
	}
	tr.Forget("k")
	if d := tr.State("k").Delay; d != 0 {
		t.Fatal("forget kept state")
	}
}

func decide(tr *Tracker, policy v1.RestartPolicy, code int, started, finished, now time.Time) (Action, time.Duration, string) {
	return Decide(tr.policy, tr.State("k"), policy, Exit{code, started, finished}, now)
}
