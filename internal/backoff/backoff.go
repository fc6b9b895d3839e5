// Package backoff is berth's one retry spacing: per-key doubling delays on
// client-go's flowcontrol.Backoff, on an injected clock. Crash-loop
// restarts, failed starts, image pulls and network sources all use it.
package backoff

import (
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
)

// Policy is Initial after the first failure, doubling up to Max.
type Policy struct {
	Initial time.Duration
	Max     time.Duration
}

// Tracker spaces out retries per key. It never forgets a key on its own
// (no 2×Max expiry): callers Reset a key on success and Forget a pod's keys
// when it goes. Safe for concurrent use.
type Tracker struct {
	clk clock.Clock
	b   *flowcontrol.Backoff
	mu  sync.Mutex
	at  map[string]time.Time // when each key last failed
}

// New returns a tracker applying p on clk.
func New(p Policy, clk clock.Clock) *Tracker {
	b := flowcontrol.NewFakeBackOff(p.Initial, p.Max, clk)
	b.HasExpiredFunc = func(time.Time, time.Time, time.Duration) bool { return false }
	return &Tracker{clk: clk, b: b, at: map[string]time.Time{}}
}

// Failed records a failure of key now and returns the wait before the next
// try: Initial the first time, then twice the last wait up to Max.
func (t *Tracker) Failed(key string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clk.Now()
	t.b.Next(key, now)
	t.at[key] = now
	return t.b.Get(key)
}

// Delay returns the wait that followed key's last failure, and whether key
// has failed since it was last reset.
func (t *Tracker) Delay(key string) (time.Duration, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.at[key]
	return t.b.Get(key), ok
}

// RetryAt returns when key may be tried again; zero when it may be now.
func (t *Tracker) RetryAt(key string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.at[key]
	if !ok {
		return time.Time{}
	}
	return at.Add(t.b.Get(key))
}

// Reset forgets key, after a success: its next failure waits Initial.
func (t *Tracker) Reset(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b.DeleteEntry(key)
	delete(t.at, key)
}

// Forget resets every key with the given prefix ("podUID/").
func (t *Tracker) Forget(prefix string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range t.at {
		if strings.HasPrefix(k, prefix) {
			t.b.DeleteEntry(k)
			delete(t.at, k)
		}
	}
}

// Len returns how many keys are backing off.
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.at)
}
