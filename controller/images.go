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
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

// imageIDs caches what berth knows of each image reference, so a pod start
// costs no image request once its image was seen. An entry goes when a
// create finds the image gone or a pull may have moved the tag.
type imageIDs struct {
	mu    sync.Mutex
	infos map[string]runtime.ImageInfo
}

func newImageIDs() *imageIDs { return &imageIDs{infos: map[string]runtime.ImageInfo{}} }

// get returns the image ID status reports for ref: its repo digest once
// pulled from a registry (as the kubelet reports imageID), else its local ID.
func (m *imageIDs) get(ref string) (string, bool) {
	info, ok := m.info(ref)
	if !ok {
		return "", false
	}
	return statusImageID(ref, info), true
}

func (m *imageIDs) info(ref string) (runtime.ImageInfo, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	info, ok := m.infos[ref]
	return info, ok
}

func (m *imageIDs) put(ref string, info runtime.ImageInfo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.infos[ref] = info
}

func (m *imageIDs) forget(ref string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.infos, ref)
}

// statusImageID picks the repo digest of ref's repository (the first one
// when ref names none of them), or the local ID for a never-pulled image.
func statusImageID(ref string, info runtime.ImageInfo) string {
	if len(info.RepoDigests) == 0 {
		return info.ID
	}
	repo := ref
	if i := strings.IndexByte(repo, '@'); i >= 0 {
		repo = repo[:i]
	} else if i := strings.LastIndexByte(repo, ':'); i > strings.LastIndexByte(repo, '/') {
		repo = repo[:i]
	}
	for _, d := range info.RepoDigests {
		if strings.HasPrefix(d, repo+"@") {
			return d
		}
	}
	return info.RepoDigests[0]
}

// imageInfo describes ref, asking the engine when it is not cached;
// runtime.ErrImageNotFound when absent.
func (c *Controller) imageInfo(ctx context.Context, ref string) (runtime.ImageInfo, error) {
	if info, ok := c.images.info(ref); ok {
		return info, nil
	}
	info, err := c.rt.InspectImage(ctx, ref)
	if err != nil {
		return runtime.ImageInfo{}, err
	}
	c.images.put(ref, info)
	return info, nil
}

// pulls runs at most one pull per image in the background, so a slow
// registry never holds a worker, and keeps per "podUID/container" key the
// state the plan reads: in flight, failed (with backoff), or just done.
type pulls struct {
	backoff *failureBackoff
	mu      sync.Mutex
	// inflight maps an image to its waiters: key -> pod key.
	inflight map[string]map[string]string
	errs     map[string]pullError
	// done marks keys whose pull succeeded and was not yet used by a start
	// (pull policy Always pulls once per start).
	done map[string]bool
	// progress is each running pull's latest progress, and notified when
	// its waiters were last enqueued to show it.
	progress map[string]runtime.PullProgress
	notified map[string]time.Time
	wg       sync.WaitGroup // pulls running
}

// progressEvery bounds how often a pull's progress re-enqueues its pods.
const progressEvery = time.Second

type pullError struct {
	msg       string
	reported  bool
	neverPull bool
}

func newPulls(b Backoff) *pulls {
	return &pulls{backoff: newFailureBackoff(b), inflight: map[string]map[string]string{},
		errs: map[string]pullError{}, done: map[string]bool{},
		progress: map[string]runtime.PullProgress{}, notified: map[string]time.Time{}}
}

// state is what the plan knows of key's pull.
func (j *pulls) state(key string) PullState {
	retry := j.backoff.retryAt(key)
	j.mu.Lock()
	defer j.mu.Unlock()
	ps := PullState{RetryAt: retry}
	for image, w := range j.inflight {
		if _, ok := w[key]; ok {
			ps.Pulling = true
			if p, ok := j.progress[image]; ok {
				ps.Progress = p.String()
			}
		}
	}
	if e, ok := j.errs[key]; ok {
		ps.Err, ps.Reported, ps.NeverPull = e.msg, e.reported, e.neverPull
	}
	return ps
}

// reported marks key's failure as shown once.
func (j *pulls) reported(key string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if e, ok := j.errs[key]; ok {
		e.reported = true
		j.errs[key] = e
	}
}

// failed records a failure of key at now.
func (j *pulls) failed(key string, now time.Time, err error, neverPull bool) time.Duration {
	d := j.backoff.failed(key, now)
	j.mu.Lock()
	j.errs[key] = pullError{msg: err.Error(), neverPull: neverPull}
	j.mu.Unlock()
	return d
}

// succeeded forgets key's failures.
func (j *pulls) succeeded(key string) {
	j.backoff.reset(key)
	j.mu.Lock()
	delete(j.errs, key)
	j.mu.Unlock()
}

// takeDone reports, once, that a pull for key succeeded since its last start.
func (j *pulls) takeDone(key string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	ok := j.done[key]
	delete(j.done, key)
	return ok
}

// forget drops the state of keys with prefix ("podUID/").
func (j *pulls) forget(prefix string) {
	j.backoff.forget(prefix)
	j.mu.Lock()
	defer j.mu.Unlock()
	for k := range j.errs {
		if strings.HasPrefix(k, prefix) {
			delete(j.errs, k)
		}
	}
	for k := range j.done {
		if strings.HasPrefix(k, prefix) {
			delete(j.done, k)
		}
	}
}

// inFlight returns the number of pulls running.
func (j *pulls) inFlight() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.inflight)
}

// start registers waiter key (of pod podKey) on image and starts the pull
// unless one runs; it reports whether it started one. When the pull ends,
// each waiter's outcome is recorded and its pod enqueued.
func (j *pulls) start(ctx context.Context, c *Controller, image, key, podKey string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if w, ok := j.inflight[image]; ok {
		w[key] = podKey
		return false
	}
	j.inflight[image] = map[string]string{key: podKey}
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		began := c.cfg.Clock.Now()
		err := c.rt.PullImage(ctx, image, func(p runtime.PullProgress) { j.report(c, image, p) })
		took := c.cfg.Clock.Since(began)
		result := "success"
		if err != nil {
			result = "failure"
		}
		c.cfg.Metrics.ImagePulled(result)
		c.images.forget(image) // the tag may point elsewhere now
		now := c.cfg.Clock.Now()
		j.mu.Lock()
		waiters := j.inflight[image]
		size := j.progress[image].Total
		delete(j.inflight, image)
		delete(j.progress, image)
		delete(j.notified, image)
		if err == nil {
			for k := range waiters {
				j.done[k] = true
			}
		}
		j.mu.Unlock()
		for k, pk := range waiters {
			if err != nil {
				j.failed(k, now, err, false)
				_, name, _ := strings.Cut(k, "/")
				c.event(pk, name, events.Warning, "Failed", "Failed to pull image %q: %v", image, err)
			} else {
				j.succeeded(k)
				_, name, _ := strings.Cut(k, "/")
				c.event(pk, name, events.Normal, "Pulled", "Successfully pulled image %q in %s (%d bytes downloaded)", image, took.Round(time.Millisecond), size)
			}
		}
		if err != nil && ctx.Err() == nil {
			c.log.Warn("image pull failed", "image", image, "err", err)
		}
		for _, pk := range waiters {
			c.Enqueue(pk)
		}
	}()
	return true
}

// report records image's progress and, at most every progressEvery,
// enqueues its waiters so their status shows it.
func (j *pulls) report(c *Controller, image string, p runtime.PullProgress) {
	now := c.cfg.Clock.Now()
	j.mu.Lock()
	j.progress[image] = p
	var wake []string
	if now.Sub(j.notified[image]) >= progressEvery {
		j.notified[image] = now
		for _, pk := range j.inflight[image] {
			wake = append(wake, pk)
		}
	}
	j.mu.Unlock()
	for _, pk := range wake {
		c.Enqueue(pk)
	}
}

// ensureImage reports whether ctr's image may be used now, as its pull
// policy says; otherwise it starts a pull (or records why none is possible)
// and sets the container's waiting reason.
func (c *Controller) ensureImage(ctx context.Context, p *model.Pod, ctr *v1.Container, key string, x *execState) (bool, error) {
	policy := runtime.PullPolicy(ctr.ImagePullPolicy)
	if c.pulls.takeDone(key) {
		return true, nil // pulled for this start
	}
	if policy == runtime.PullAlways {
		c.pull(ctx, p, ctr, key, x)
		return false, nil
	}
	_, err := c.imageInfo(ctx, ctr.Image)
	switch {
	case err == nil:
		return true, nil
	case !errors.Is(err, runtime.ErrImageNotFound):
		return false, err
	case policy == runtime.PullNever:
		err := fmt.Errorf("container image %q is not present with pull policy of Never", ctr.Image)
		delay := c.pulls.failed(key, c.cfg.Clock.Now(), err, true)
		x.wait(ctr.Name, v1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: err.Error()})
		x.requeue(delay)
		c.event(p.Key, ctr.Name, events.Warning, "ErrImageNeverPull", "%v", err)
		return false, nil
	}
	c.pull(ctx, p, ctr, key, x)
	return false, nil
}

func (c *Controller) pull(ctx context.Context, p *model.Pod, ctr *v1.Container, key string, x *execState) {
	if c.pulls.start(ctx, c, ctr.Image, key, p.Key) {
		c.event(p.Key, ctr.Name, events.Normal, "Pulling", "Pulling image %q", ctr.Image)
	}
	x.wait(ctr.Name, v1.ContainerStateWaiting{Reason: "ContainerCreating", Message: fmt.Sprintf("Pulling image %q", ctr.Image)})
}
