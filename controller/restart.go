package controller

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Action is what the restart tracker decides for an exited container.
type Action int

const (
	// ActionNone: leave the container exited (policy forbids a restart).
	ActionNone Action = iota
	// ActionWait: restart after the returned delay (crash-loop backoff).
	ActionWait
	// ActionRestart: restart now.
	ActionRestart
)

// Backoff is the crash-loop policy: the first restart is immediate, then
// Initial, doubling up to Max; a container that ran for Reset is forgiven.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
	Reset   time.Duration
}

// RestartTracker decides restarts of exited containers, keyed by
// "podUID/container". It holds only backoff state and reads no clock: the
// caller passes now, which keeps it a pure, testable policy.
type RestartTracker struct {
	policy Backoff
	mu     sync.Mutex
	state  map[string]*backoffState
}

type backoffState struct {
	delay time.Duration // the wait applied to the next crash
}

// NewRestartTracker returns a tracker applying b.
func NewRestartTracker(b Backoff) *RestartTracker {
	return &RestartTracker{policy: b, state: map[string]*backoffState{}}
}

// Decide returns what to do about a container that exited with exitCode at
// finished after starting at started, under policy, at time now. A returned
// ActionRestart must be followed by Restarted(key) once done.
func (t *RestartTracker) Decide(key string, policy v1.RestartPolicy, exitCode int, started, finished, now time.Time) (Action, time.Duration, string) {
	switch {
	case policy == v1.RestartPolicyNever:
		return ActionNone, 0, "restartPolicy is Never"
	case policy == v1.RestartPolicyOnFailure && exitCode == 0:
		return ActionNone, 0, "exited 0 and restartPolicy is OnFailure"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.state[key]
	if st == nil {
		return ActionRestart, 0, "first restart"
	}
	if !started.IsZero() && !finished.IsZero() && finished.Sub(started) >= t.policy.Reset {
		st.delay = 0
		return ActionRestart, 0, "ran long enough to reset backoff"
	}
	if st.delay == 0 {
		return ActionRestart, 0, "backoff reset"
	}
	if wait := finished.Add(st.delay).Sub(now); wait > 0 {
		return ActionWait, wait, "CrashLoopBackOff"
	}
	return ActionRestart, 0, "backoff elapsed"
}

// Restarted records a restart and grows the delay before the next one.
func (t *RestartTracker) Restarted(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.state[key]
	if st == nil {
		st = &backoffState{}
		t.state[key] = st
	}
	switch {
	case st.delay == 0:
		st.delay = t.policy.Initial
	default:
		st.delay *= 2
	}
	if st.delay > t.policy.Max {
		st.delay = t.policy.Max
	}
}

// Delay returns the backoff that the next crash of key will wait.
func (t *RestartTracker) Delay(key string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st := t.state[key]; st != nil {
		return st.delay
	}
	return 0
}

// Forget drops the state of every key with the given prefix ("podUID/").
func (t *RestartTracker) Forget(prefix string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range t.state {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			delete(t.state, k)
		}
	}
}
