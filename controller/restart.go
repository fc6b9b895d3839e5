package controller

import (
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Action is what the restart policy decides for an exited container.
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

// CrashState is the crash-loop state of one container: Restarted once berth
// restarted it, Delay the wait applied to its next crash.
type CrashState struct {
	Restarted bool
	Delay     time.Duration
}

// Exit is how one instance of a container ended.
type Exit struct {
	Code              int
	Started, Finished time.Time
}

// decideRestart is the restart policy as a pure function: what to do about a
// container in crash state st whose latest instance ended as e, under
// policy, at now.
func decideRestart(b Backoff, st CrashState, policy v1.RestartPolicy, e Exit, now time.Time) (Action, time.Duration, string) {
	switch {
	case policy == v1.RestartPolicyNever:
		return ActionNone, 0, "restartPolicy is Never"
	case policy == v1.RestartPolicyOnFailure && e.Code == 0:
		return ActionNone, 0, "exited 0 and restartPolicy is OnFailure"
	case !st.Restarted:
		return ActionRestart, 0, "first restart"
	case !e.Started.IsZero() && !e.Finished.IsZero() && e.Finished.Sub(e.Started) >= b.Reset:
		return ActionRestart, 0, "ran long enough to reset backoff"
	case st.Delay == 0:
		return ActionRestart, 0, "backoff reset"
	}
	if wait := e.Finished.Add(st.Delay).Sub(now); wait > 0 {
		return ActionWait, wait, "CrashLoopBackOff"
	}
	return ActionRestart, 0, "backoff elapsed"
}

// RestartTracker holds crash-loop state keyed by "podUID/container"; the
// decisions are decideRestart's, over a State read when planning.
type RestartTracker struct {
	policy Backoff
	mu     sync.Mutex
	state  map[string]CrashState
}

// NewRestartTracker returns a tracker applying b.
func NewRestartTracker(b Backoff) *RestartTracker {
	return &RestartTracker{policy: b, state: map[string]CrashState{}}
}

// State returns the crash-loop state of key.
func (t *RestartTracker) State(key string) CrashState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state[key]
}

// Restarted records a restart of key after a run of ranFor and grows the
// delay before the next one (a run of Reset or more starts it over).
func (t *RestartTracker) Restarted(key string, ranFor time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.state[key]
	switch {
	case !st.Restarted || st.Delay == 0 || ranFor >= t.policy.Reset:
		st.Delay = t.policy.Initial
	default:
		st.Delay *= 2
	}
	if st.Delay > t.policy.Max {
		st.Delay = t.policy.Max
	}
	st.Restarted = true
	t.state[key] = st
}

// Forget drops the state of every key with the given prefix ("podUID/").
func (t *RestartTracker) Forget(prefix string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range t.state {
		if strings.HasPrefix(k, prefix) {
			delete(t.state, k)
		}
	}
}
