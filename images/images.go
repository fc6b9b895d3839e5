// Package images makes sure the images of containers are there, as their
// pull policies say: it caches what berth knows of each image reference and
// runs pulls in the background, at most one per image, spacing out the
// retries of a failed pull per container.
package images

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/internal/backoff"
	"github.com/berth-dev/berth/pause"
	"github.com/berth-dev/berth/runtime"
)

// Engine is the part of the runtime images use (runtime.Runtime).
type Engine interface {
	InspectImage(ctx context.Context, image string) (runtime.ImageInfo, error)
	PullImage(ctx context.Context, image string, creds *runtime.Credentials, progress func(runtime.PullProgress)) error
}

// Metrics counts the pulls that ended, by result ("success", "failure").
type Metrics interface {
	ImagePulled(result string)
}

// Config is what a Manager needs; every field is required except Log.
type Config struct {
	Engine  Engine
	Clock   clock.Clock
	Backoff backoff.Policy
	Metrics Metrics
	// Event records an event about container of pod podKey's incarnation
	// podUID (the UID of the waiter key "podUID/name"), so that a pod
	// replacing it under the same key is not shown its pulls.
	Event func(podKey, podUID, container, typ, reason, format string, args ...interface{})
	// Enqueue asks for pod podKey to be looked at again: when a pull it
	// waits for ends, or made progress to show.
	Enqueue func(podKey string)
	// Reserved are the sandbox image's repositories (pause.Reserved),
	// never pulled for a pod; nil is berth's own (pause.Reserved("")).
	Reserved []string
	Log      *slog.Logger
}

// State is what the plan knows of the image pull of one container.
type State struct {
	Pulling bool
	// Progress is the running pull's "12.3 MiB of 40.1 MiB (1/3 layers)",
	// once the engine reported any.
	Progress string
	// RetryAt is when a failed pull may be tried again; Err is its failure.
	RetryAt time.Time
	Err     string
	// Reported is set once the failure was shown as ErrImagePull; from then
	// on the wait shows as ImagePullBackOff, as in the kubelet.
	Reported bool
	// NeverPull is set when the image is absent and its policy is Never.
	NeverPull bool
}

// progressEvery bounds how often a pull's progress re-enqueues its pods.
const progressEvery = time.Second

// Manager caches image descriptions and runs pulls, so a slow registry never
// holds a worker, keeping per "podUID/container" key the state the plan
// reads: in flight, failed (with backoff), or just done. Create with New;
// Wait for its pulls before dropping it.
type Manager struct {
	cfg     Config
	ids     *imageIDs
	backoff *backoff.Tracker
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

type pullError struct {
	msg       string
	reported  bool
	neverPull bool
}

// New returns a Manager with no image known and no pull running.
func New(cfg Config) *Manager {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Reserved == nil {
		cfg.Reserved = pause.Reserved("")
	}
	return &Manager{cfg: cfg, ids: newImageIDs(), backoff: backoff.New(cfg.Backoff, cfg.Clock),
		inflight: map[string]map[string]string{}, errs: map[string]pullError{}, done: map[string]bool{},
		progress: map[string]runtime.PullProgress{}, notified: map[string]time.Time{}}
}

// ImageID returns the image ID status reports for ref, if ref was seen: its
// repo digest once pulled from a registry (as the kubelet reports imageID),
// else its local ID.
func (m *Manager) ImageID(ref string) (string, bool) { return m.ids.get(ref) }

// Info describes ref, asking the engine when it is not cached;
// runtime.ErrImageNotFound when absent.
func (m *Manager) Info(ctx context.Context, ref string) (runtime.ImageInfo, error) {
	if info, ok := m.ids.info(ref); ok {
		return info, nil
	}
	info, err := m.cfg.Engine.InspectImage(ctx, ref)
	if err != nil {
		return runtime.ImageInfo{}, err
	}
	m.ids.put(ref, info)
	return info, nil
}

// ForgetImage drops what is cached of ref: the engine said it is gone.
func (m *Manager) ForgetImage(ref string) { m.ids.forget(ref) }

// Ensure reports whether ctr's image may be used now by container key
// ("podUID/name") of pod podKey, as its pull policy says. When not, it has
// started a pull (or recorded why none is possible) and returns the
// container's waiting state and, after a failure, the wait before the next
// try. err is the engine's failure to describe the image.
//
// creds are the pod's registry logins (its imagePullSecrets; nil: none
// but docker.config's); a pull already in flight for the image keeps the
// logins it started with.
//
// An image of the sandbox image's repositories (Config.Reserved) is used
// as the engine has it and never pulled, whatever the policy: a pull
// would re-tag the image later sandboxes are made from.
func (m *Manager) Ensure(ctx context.Context, podKey, key string, ctr *v1.Container, creds *runtime.Credentials) (ready bool, wait v1.ContainerStateWaiting, retryIn time.Duration, err error) {
	policy := runtime.PullPolicy(ctr.ImagePullPolicy)
	repo, reserved := pause.ReservedRepository(ctr.Image, m.cfg.Reserved)
	if reserved {
		policy = runtime.PullNever
	}
	if m.takeDone(key) {
		return true, wait, 0, nil // pulled for this start
	}
	if policy == runtime.PullAlways {
		return false, m.pull(ctx, podKey, key, ctr, creds), 0, nil
	}
	_, err = m.Info(ctx, ctr.Image)
	switch {
	case err == nil:
		return true, wait, 0, nil
	case !errors.Is(err, runtime.ErrImageNotFound):
		return false, wait, 0, err
	case reserved:
		err := fmt.Errorf("container image %q is not present, and berth never pulls the pod sandbox image's repository %s for a pod", ctr.Image, repo)
		delay := m.failed(key, err, true)
		m.cfg.Event(podKey, podUIDOf(key), ctr.Name, events.Warning, "ErrImageNeverPull", "%v", err)
		return false, v1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: err.Error()}, delay, nil
	case policy == runtime.PullNever:
		err := fmt.Errorf("container image %q is not present with pull policy of Never", ctr.Image)
		delay := m.failed(key, err, true)
		m.cfg.Event(podKey, podUIDOf(key), ctr.Name, events.Warning, "ErrImageNeverPull", "%v", err)
		return false, v1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: err.Error()}, delay, nil
	}
	return false, m.pull(ctx, podKey, key, ctr, creds), 0, nil
}

// podUIDOf is the pod UID of waiter key "podUID/name".
func podUIDOf(key string) string {
	uid, _, _ := strings.Cut(key, "/")
	return uid
}

// pull starts the pull of ctr's image for key unless one runs, and returns
// the wait it causes.
func (m *Manager) pull(ctx context.Context, podKey, key string, ctr *v1.Container, creds *runtime.Credentials) v1.ContainerStateWaiting {
	if m.start(ctx, ctr.Image, key, podKey, creds) {
		m.cfg.Event(podKey, podUIDOf(key), ctr.Name, events.Normal, "Pulling", "Pulling image %q", ctr.Image)
	}
	return v1.ContainerStateWaiting{Reason: "ContainerCreating", Message: fmt.Sprintf("Pulling image %q", ctr.Image)}
}

// State is what the plan knows of key's pull.
func (m *Manager) State(key string) State {
	retry := m.backoff.RetryAt(key)
	m.mu.Lock()
	defer m.mu.Unlock()
	ps := State{RetryAt: retry}
	for image, w := range m.inflight {
		if _, ok := w[key]; ok {
			ps.Pulling = true
			if p, ok := m.progress[image]; ok {
				ps.Progress = p.String()
			}
		}
	}
	if e, ok := m.errs[key]; ok {
		ps.Err, ps.Reported, ps.NeverPull = e.msg, e.reported, e.neverPull
	}
	return ps
}

// Reported marks key's failure as shown once.
func (m *Manager) Reported(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.errs[key]; ok {
		e.reported = true
		m.errs[key] = e
	}
}

// failed records a failure of key now and returns the wait before the next
// try.
func (m *Manager) failed(key string, err error, neverPull bool) time.Duration {
	d := m.backoff.Failed(key)
	m.mu.Lock()
	m.errs[key] = pullError{msg: err.Error(), neverPull: neverPull}
	m.mu.Unlock()
	return d
}

// succeeded forgets key's failures.
func (m *Manager) succeeded(key string) {
	m.backoff.Reset(key)
	m.mu.Lock()
	delete(m.errs, key)
	m.mu.Unlock()
}

// takeDone reports, once, that a pull for key succeeded since its last start.
func (m *Manager) takeDone(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	ok := m.done[key]
	delete(m.done, key)
	return ok
}

// Forget drops the state of keys with prefix ("podUID/").
func (m *Manager) Forget(prefix string) {
	m.backoff.Forget(prefix)
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.errs {
		if strings.HasPrefix(k, prefix) {
			delete(m.errs, k)
		}
	}
	for k := range m.done {
		if strings.HasPrefix(k, prefix) {
			delete(m.done, k)
		}
	}
}

// Wait blocks until no pull runs; a pull ends with the ctx it was started
// with, so cancel that first.
func (m *Manager) Wait() { m.wg.Wait() }

// start registers waiter key (of pod podKey) on image and starts the pull
// unless one runs; it reports whether it started one. When the pull ends,
// each waiter's outcome is recorded and its pod enqueued.
func (m *Manager) start(ctx context.Context, image, key, podKey string, creds *runtime.Credentials) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w, ok := m.inflight[image]; ok {
		w[key] = podKey
		return false
	}
	m.inflight[image] = map[string]string{key: podKey}
	m.cfg.Log.Info("pulling image", "image", image, "pod", podKey)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.run(ctx, image, creds)
	}()
	return true
}

// run pulls image and records the outcome for its waiters.
func (m *Manager) run(ctx context.Context, image string, creds *runtime.Credentials) {
	clk := m.cfg.Clock
	began := clk.Now()
	err := m.pullImage(ctx, image, creds)
	took := clk.Since(began)
	result := "success"
	if err != nil {
		result = "failure"
	}
	m.cfg.Metrics.ImagePulled(result)
	m.ids.forget(image) // the tag may point elsewhere now
	m.mu.Lock()
	waiters := m.inflight[image]
	size := m.progress[image].Total
	delete(m.inflight, image)
	delete(m.progress, image)
	delete(m.notified, image)
	if err == nil {
		for k := range waiters {
			m.done[k] = true
		}
	}
	m.mu.Unlock()
	for k, pk := range waiters {
		uid, name, _ := strings.Cut(k, "/")
		if err != nil {
			m.failed(k, err, false)
			m.cfg.Event(pk, uid, name, events.Warning, "Failed", "Failed to pull image %q: %v", image, err)
		} else {
			m.succeeded(k)
			m.cfg.Event(pk, uid, name, events.Normal, "Pulled", "Successfully pulled image %q in %s (%d bytes downloaded)", image, took.Round(time.Millisecond), size)
		}
	}
	switch {
	case err == nil:
		m.cfg.Log.Info("pulled image", "image", image, "size", fmt.Sprintf("%.1fMiB", float64(size)/(1<<20)), "took", took.Round(time.Millisecond))
	case ctx.Err() == nil:
		m.cfg.Log.Warn("image pull failed", "image", image, "err", err, "took", took.Round(time.Millisecond))
	}
	for _, pk := range waiters {
		m.cfg.Enqueue(pk)
	}
}

// pullImage is the engine's pull of image with a panic in it (the engine
// client's, or a progress report's) turned into a failed pull, logged with
// its stack, instead of the end of berth.
func (m *Manager) pullImage(ctx context.Context, image string, creds *runtime.Credentials) (err error) {
	defer func() {
		if r := recover(); r != nil {
			m.cfg.Log.Error("image pull panicked", "image", image, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = fmt.Errorf("pull panicked: %v", r)
		}
	}()
	return m.cfg.Engine.PullImage(ctx, image, creds, func(p runtime.PullProgress) { m.report(image, p) })
}

// report records image's progress and, at most every progressEvery,
// enqueues its waiters so their status shows it.
func (m *Manager) report(image string, p runtime.PullProgress) {
	now := m.cfg.Clock.Now()
	m.mu.Lock()
	m.progress[image] = p
	var wake []string
	if now.Sub(m.notified[image]) >= progressEvery {
		m.notified[image] = now
		for _, pk := range m.inflight[image] {
			wake = append(wake, pk)
		}
	}
	m.mu.Unlock()
	for _, pk := range wake {
		m.cfg.Enqueue(pk)
	}
}

// imageIDs caches what berth knows of each image reference, so a pod start
// costs no image request once its image was seen. An entry goes when a
// create finds the image gone or a pull may have moved the tag.
type imageIDs struct {
	mu    sync.Mutex
	infos map[string]runtime.ImageInfo
}

func newImageIDs() *imageIDs { return &imageIDs{infos: map[string]runtime.ImageInfo{}} }

func (c *imageIDs) get(ref string) (string, bool) {
	info, ok := c.info(ref)
	if !ok {
		return "", false
	}
	return statusImageID(ref, info), true
}

func (c *imageIDs) info(ref string) (runtime.ImageInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	info, ok := c.infos[ref]
	return info, ok
}

func (c *imageIDs) put(ref string, info runtime.ImageInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.infos[ref] = info
}

func (c *imageIDs) forget(ref string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.infos, ref)
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
