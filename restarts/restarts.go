// Package restarts is the kubelet's restart policy for exited containers
// as a pure decision (Decide) over a small crash-loop tracker with the clock
// injected: the first restart is immediate, then the delay doubles up to a
// cap, and a container that ran long enough is forgiven.
package restarts

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/internal/backoff"
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
// Initial and Max space out failed starts and pulls too.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
	Reset   time.Duration
}

// Policy is b's doubling, without the reset.
func (b Backoff) Policy() backoff.Policy { return backoff.Policy{Initial: b.Initial, Max: b.Max} }

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

// Decide is the restart policy as a pure function: what to do about a
// container in crash state st whose latest instance ended as e, under
// policy, at now.
func Decide(b Backoff, st CrashState, policy v1.RestartPolicy, e Exit, now time.Time) (Action, time.Duration, string) {
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

// Tracker holds crash-loop state keyed by "podUID/container", on
// backoff.Tracker; the decisions are Decide's, over a State read when
// planning.
type Tracker struct {
	policy Backoff
	delays *backoff.Tracker
}

// New returns a tracker applying b on clk.
func New(b Backoff, clk clock.Clock) *Tracker {
	return &Tracker{policy: b, delays: backoff.New(b.Policy(), clk)}
}

// State returns the crash-loop state of key.
func (t *Tracker) State(key string) CrashState {
	d, restarted := t.delays.Delay(key)
	return CrashState{Restarted: restarted, Delay: d}
}

// Restarted records a restart of key after a run of ranFor and grows the
// delay before the next one (a run of Reset or more starts it over).
func (t *Tracker) Restarted(key string, ranFor time.Duration) {
	if ranFor >= t.policy.Reset {
		t.delays.Reset(key)
	}
	t.delays.Failed(key)
}

// Forget drops the state of every key with the given prefix ("podUID/").
func (t *Tracker) Forget(prefix string) { t.delays.Forget(prefix) }
