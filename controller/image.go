package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

// ensureImage reports false (with the result to return) while the image is
// unavailable, recording ErrImagePull or ImagePullBackOff as the waiting
// reason, as the kubelet does. Pulls run in the background, one per image,
// so a slow registry never holds a worker: the pod is requeued when its pull
// ends.
func (c *Controller) ensureImage(ctx context.Context, p *store.Pod, ctr *v1.Container, key string, st *podState) (Result, bool) {
	now := c.cfg.Clock.Now()
	policy := runtime.PullPolicy(ctr.ImagePullPolicy)
	err, finished := c.pullJobs.result(key)
	switch {
	case finished && err == nil:
		c.pulls.reset(key)
		return Result{}, true
	case finished:
		// handled below as a failure
	default:
		if at := c.pulls.retryAt(key); !at.IsZero() && now.Before(at) {
			st.waiting[ctr.Name] = v1.ContainerStateWaiting{Reason: "ImagePullBackOff",
				Message: fmt.Sprintf("Back-off pulling image %q", ctr.Image)}
			return Result{RequeueAfter: at.Sub(now)}, false
		}
		present, perr := c.rt.ImagePresent(ctx, ctr.Image)
		switch {
		case perr != nil:
			err = perr
		case present && policy != runtime.PullAlways:
			c.pulls.reset(key)
			return Result{}, true
		case !present && policy == runtime.PullNever:
			err = runtime.ErrImageNeverPull
		default:
			if c.pullJobs.start(ctx, c, ctr.Image, key, p.Key) {
				c.event(p.Key, ctr.Name, events.Normal, "Pulling", "Pulling image %q", ctr.Image)
			}
			st.waiting[ctr.Name] = v1.ContainerStateWaiting{Reason: "ContainerCreating", Message: fmt.Sprintf("Pulling image %q", ctr.Image)}
			return Result{}, false
		}
	}
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

// pullJobs runs at most one pull per image and hands each waiting pod
// container its outcome once.
type pullJobs struct {
	mu       sync.Mutex
	inflight map[string]map[string]string // image -> waiter key -> pod key
	results  map[string]error             // waiter key -> outcome
}

func newPullJobs() *pullJobs {
	return &pullJobs{inflight: map[string]map[string]string{}, results: map[string]error{}}
}

// forget drops finished outcomes of waiters whose key has prefix.
func (j *pullJobs) forget(prefix string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for k := range j.results {
		if strings.HasPrefix(k, prefix) {
			delete(j.results, k)
		}
	}
}

// result consumes the outcome of a finished pull for waiter key.
func (j *pullJobs) result(key string) (error, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	err, ok := j.results[key]
	delete(j.results, key)
	return err, ok
}

// start registers waiter key (of pod podKey) on image and starts the pull
// unless one is running; it reports whether it started one.
func (j *pullJobs) start(ctx context.Context, c *Controller, image, key, podKey string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if w, ok := j.inflight[image]; ok {
		w[key] = podKey
		return false
	}
	j.inflight[image] = map[string]string{key: podKey}
	go func() {
		err := c.rt.PullImage(ctx, image)
		result := "success"
		if err != nil {
			result = "failure"
		}
		c.cfg.Metrics.ImagePulled(result)
		j.mu.Lock()
		waiters := j.inflight[image]
		delete(j.inflight, image)
		for k := range waiters {
			j.results[k] = err
		}
		j.mu.Unlock()
		for _, pk := range waiters {
			c.Enqueue(pk)
		}
	}()
	return true
}
