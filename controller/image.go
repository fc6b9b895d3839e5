package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

// pullBackoff spaces out retries of failed image pulls per pod container,
// with the same doubling as crash backoff.
type pullBackoff struct {
	policy Backoff
	mu     sync.Mutex
	fail   map[string]pullFailure
}

type pullFailure struct {
	at    time.Time
	delay time.Duration
}

func newPullBackoff(b Backoff) *pullBackoff {
	return &pullBackoff{policy: b, fail: map[string]pullFailure{}}
}

// retryAt returns when key may be pulled again; zero when now.
func (b *pullBackoff) retryAt(key string) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.fail[key]
	if !ok {
		return time.Time{}
	}
	return f.at.Add(f.delay)
}

func (b *pullBackoff) failed(key string, now time.Time) time.Duration {
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

func (b *pullBackoff) reset(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.fail, key)
}

func (b *pullBackoff) forget(prefix string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.fail {
		if strings.HasPrefix(k, prefix) {
			delete(b.fail, k)
		}
	}
}

// ensureImage reports false (with the result to return) while the image is
// unavailable, recording ErrImagePull or ImagePullBackOff as the waiting
// reason, as the kubelet does.
func (c *Controller) ensureImage(ctx context.Context, p *store.Pod, ctr *v1.Container, key string, st *podState) (Result, bool) {
	now := c.cfg.Clock.Now()
	if at := c.pulls.retryAt(key); !at.IsZero() && now.Before(at) {
		st.waiting[ctr.Name] = v1.ContainerStateWaiting{Reason: "ImagePullBackOff",
			Message: fmt.Sprintf("Back-off pulling image %q", ctr.Image)}
		return Result{RequeueAfter: at.Sub(now)}, false
	}
	policy := runtime.PullPolicy(ctr.ImagePullPolicy)
	present, err := c.rt.ImagePresent(ctx, ctr.Image)
	if err == nil && (!present || policy == runtime.PullAlways) {
		err = runtime.EnsureImage(ctx, c.rt, ctr.Image, policy)
		result := "success"
		if err != nil {
			result = "failure"
		}
		c.cfg.Metrics.ImagePulled(result)
	}
	if err != nil {
		delay := c.pulls.failed(key, now)
		reason := "ErrImagePull"
		if errors.Is(err, runtime.ErrImageNeverPull) {
			reason = "ErrImageNeverPull"
		}
		st.waiting[ctr.Name] = v1.ContainerStateWaiting{Reason: reason, Message: err.Error()}
		c.event(p.Key, ctr.Name, events.Warning, "Failed", "Failed to pull image %q: %v", ctr.Image, err)
		c.log.Warn("image unavailable", "pod", p.Key, "container", ctr.Name, "image", ctr.Image, "err", err)
		return Result{RequeueAfter: delay}, false
	}
	c.pulls.reset(key)
	return Result{}, true
}
