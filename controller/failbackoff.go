package controller

import (
	"strings"
	"sync"
	"time"
)

// failureBackoff spaces out retries of a failing step (a container start,
// an image pull) per "podUID/container" key, with the doubling of crash
// backoff: Initial after the first failure, then twice as long up to Max.
type failureBackoff struct {
	policy Backoff
	mu     sync.Mutex
	fail   map[string]failure
}

type failure struct {
	at    time.Time
	delay time.Duration
}

func newFailureBackoff(b Backoff) *failureBackoff {
	return &failureBackoff{policy: b, fail: map[string]failure{}}
}

// retryAt returns when key may be tried again; zero when now.
func (b *failureBackoff) retryAt(key string) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.fail[key]
	if !ok {
		return time.Time{}
	}
	return f.at.Add(f.delay)
}

// failed records a failure of key at now and returns the wait before the
// next try.
func (b *failureBackoff) failed(key string, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.fail[key]
	if f.delay == 0 {
		f.delay = b.policy.Initial
	} else if f.delay *= 2; f.delay > b.policy.Max {
		f.delay = b.policy.Max
	}
	f.at = now
	b.fail[key] = f
	return f.delay
}

// reset forgets key after a success.
func (b *failureBackoff) reset(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.fail, key)
}

// forget drops every key with prefix ("podUID/").
func (b *failureBackoff) forget(prefix string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.fail {
		if strings.HasPrefix(k, prefix) {
			delete(b.fail, k)
		}
	}
}
