// Package controller makes the runtime match the store: one pod key at a
// time, level-based, from a rate-limited workqueue.
package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/eviction"
	"github.com/berth-dev/berth/images"
	"github.com/berth-dev/berth/internal/backoff"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/pause"
	"github.com/berth-dev/berth/pauseimage"
	"github.com/berth-dev/berth/podconfig"
	"github.com/berth-dev/berth/podfs"
	"github.com/berth-dev/berth/prober"
	"github.com/berth-dev/berth/projected"
	"github.com/berth-dev/berth/restarts"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
	"github.com/berth-dev/berth/termmsg"
)

// DefaultEvictionInterval is how often disk emptyDirs with a sizeLimit are
// measured when Config.EvictionInterval is not set.
const DefaultEvictionInterval = eviction.DefaultInterval

// Config is the controller's part of berth's configuration.
type Config struct {
	Node string
	// NodeInfo is the host as pods see it (status.hostIP, downward API).
	NodeInfo NodeInfo
	RootDir  string
	Workers  int
	// Resync re-enqueues every known pod key this often.
	Resync  time.Duration
	Backoff restarts.Backoff
	// PauseImage is the sandbox image's reference (pod_infra_image);
	// sandboxes are made from the ID it is pinned to (see pauseimage.Image).
	PauseImage string
	// PauseBuild is how to build PauseImage when the tag does not hold
	// exactly its program; nil means the image is pulled when absent.
	PauseBuild *pause.Build
	Clock      clock.WithTicker
	Metrics    Metrics
	// Events receives what the controller does to pods (nil: discarded).
	Events events.Recorder
	// Prober runs probes of running containers (nil: probes are ignored).
	Prober Prober
	// Hooks runs lifecycle hooks (nil: hooks are ignored).
	Hooks HookRunner
	// QueueMetrics provides the client-go workqueue metrics (nil: none).
	QueueMetrics workqueue.MetricsProvider
	// Log receives the controller's log lines (nil: discarded).
	Log *slog.Logger
	// EvictionInterval is how often disk emptyDirs with a sizeLimit are
	// measured for eviction (0: DefaultEvictionInterval, the kubelet's
	// housekeeping period).
	EvictionInterval time.Duration
	// MaxParallelStops is how many pods may stop containers at once
	// (0: DefaultMaxParallelStops); the others wait for a slot.
	MaxParallelStops int
}

// NodeInfo describes the host berth runs on (podconfig's, which translation
// reads).
type NodeInfo = podconfig.NodeInfo

// Result tells the worker whether to look at the key again.
type Result struct {
	Requeue      bool
	RequeueAfter time.Duration
}

// Controller reconciles pods. Create with New, feed keys with Enqueue (the
// store notifier), run with Run.
type Controller struct {
	cfg      Config
	store    *store.Store
	rt       runtime.Runtime
	queue    workqueue.TypedRateLimitingInterface[string]
	restarts *restarts.Tracker
	life     *lifeLog
	images   *images.Manager
	// startFails backs off containers and sandboxes whose start failed.
	startFails *backoff.Tracker
	// podconfig translates pods into engine configs; paths is root_dir,
	// where each pod's files are.
	podconfig *podconfig.Builder
	paths     podfs.Root
	// ops runs each pod's slow work (stops, postStart hooks) beside the
	// workers.
	ops    *podOps
	probes Prober
	log    *slog.Logger
	rec    recorder
	// obs writes the engine's answers about single containers; lc stops
	// containers and runs their hooks; status writes pods' statuses.
	obs    *observer
	lc     *lifecycle
	status *statusWriter

	// pause is the sandbox image, pinned by ID.
	pause *pauseimage.Image
	// evict is the emptyDir sizeLimit housekeeping and its verdicts.
	evict *eviction.Manager
	// projected is what was written of pods' projected volumes.
	projected *projected.Writer
	// volumes knows which pod UIDs may have engine volumes.
	volumes *volumeUIDs
}

// Queue is the controller's workqueue of pod keys.
type Queue = workqueue.TypedRateLimitingInterface[string]

// NewQueue returns the pod-key queue: per-key exponential retry from 50 ms
// to 30 s, on clk. Build it first and give its Add to the store and the
// prober as their notifier, then hand it to New.
func NewQueue(clk clock.WithTicker, mp workqueue.MetricsProvider) Queue {
	if clk == nil {
		clk = clock.RealClock{}
	}
	rl := workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, 30*time.Second),
	)
	return workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[string]{
		Name:            "pods",
		Clock:           clk,
		MetricsProvider: mp,
	})
}

// New returns a controller over st and rt that works the keys of q (nil: a
// new queue of its own, fed only by Enqueue). The store's notifier must add
// to the same q, or changes go unseen.
func New(cfg Config, st *store.Store, rt runtime.Runtime, q Queue) *Controller {
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Metrics == nil {
		cfg.Metrics = noMetrics{}
	}
	if cfg.Prober == nil {
		cfg.Prober = noProber{}
	}
	if cfg.Events == nil {
		cfg.Events = events.Discard{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxParallelStops <= 0 {
		cfg.MaxParallelStops = DefaultMaxParallelStops
	}
	if cfg.EvictionInterval <= 0 {
		cfg.EvictionInterval = DefaultEvictionInterval
	}
	if cfg.Backoff.Reset == 0 {
		cfg.Backoff.Reset = 10 * time.Minute
	}
	if q == nil {
		q = NewQueue(cfg.Clock, cfg.QueueMetrics)
	}
	paths := podfs.New(cfg.RootDir)
	c := &Controller{
		cfg:        cfg,
		store:      st,
		rt:         rt,
		queue:      q,
		restarts:   restarts.New(cfg.Backoff, cfg.Clock),
		startFails: backoff.New(cfg.Backoff.Policy(), cfg.Clock),
		podconfig: podconfig.New(podconfig.Config{Node: cfg.Node, NodeInfo: cfg.NodeInfo, RootDir: cfg.RootDir},
			paths, podfs.Host{}),
		paths:   paths,
		volumes: newVolumeUIDs(rt, cfg.Node),
		probes:  cfg.Prober,
		log:     cfg.Log.With("component", "controller"),
	}
	c.rec = recorder{cfg: &c.cfg, store: st}
	c.pause = pauseimage.New(cfg.PauseImage, cfg.PauseBuild, rt, c.log)
	c.images = images.New(images.Config{Engine: rt, Clock: cfg.Clock, Backoff: cfg.Backoff.Policy(), Metrics: cfg.Metrics,
		Event: c.rec.image, Enqueue: c.Enqueue, Reserved: pause.Reserved(cfg.PauseImage), Log: c.log})
	c.projected = projected.New(paths, podconfig.MaxPodProjectedBytes, c.log)
	c.evict = eviction.New(eviction.Config{Store: st, Paths: paths, Clock: cfg.Clock, Interval: cfg.EvictionInterval,
		Log: c.log, Enqueue: c.Enqueue, SpecHash: specHash})
	c.ops = newPodOps(c.Enqueue, c.log)
	c.life = newLifeLog(c.log)
	c.obs = &observer{store: st, rt: rt, images: c.images}
	c.lc = &lifecycle{cfg: &c.cfg, store: st, rt: rt, hooks: cfg.Hooks, rec: c.rec, obs: c.obs,
		slots: semaphore.NewWeighted(int64(cfg.MaxParallelStops)), log: c.log}
	c.status = &statusWriter{cfg: &c.cfg, store: st, msgs: termmsg.Reader{Paths: paths, Logs: rt}, life: c.life}
	return c
}

// Enqueue adds a pod key; it never blocks and is safe from any goroutine.
func (c *Controller) Enqueue(key string) {
	if key != "" {
		c.queue.Add(key)
	}
}

// Run starts the workers, the resync loop, the eviction housekeeping
// loop and the pause image's recheck, and blocks until ctx ends and the
// workers have finished their current keys.
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i := 0; i < c.cfg.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c.processNextWorkItem(ctx) {
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.resyncLoop(ctx)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.evict.Run(ctx)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.pause.Run(ctx, c.cfg.Clock)
	}()
	<-ctx.Done()
	c.queue.ShutDownWithDrain()
	wg.Wait()
	c.ops.wait()
	c.images.Wait()
}

func (c *Controller) resyncLoop(ctx context.Context) {
	if c.cfg.Resync <= 0 {
		return
	}
	t := c.cfg.Clock.NewTicker(c.cfg.Resync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			c.EnqueueAll()
		}
	}
}

// EnqueueAll adds every desired pod and every pod key that has containers.
func (c *Controller) EnqueueAll() {
	pods, _ := c.store.Pods(nil)
	for _, p := range pods {
		c.queue.Add(p.Key)
	}
	ctrs, _ := c.store.Containers(nil)
	for _, ct := range ctrs {
		c.queue.Add(ct.PodKey)
	}
}

func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)

	start := c.cfg.Clock.Now()
	res, err, panicked := c.reconcile(ctx, key)
	var outcome string
	switch {
	case panicked:
		outcome = ResultPanic
		c.queue.AddRateLimited(key)
	case err != nil:
		outcome = ResultError
		c.queue.AddRateLimited(key)
		if !errors.Is(err, context.Canceled) {
			c.log.Warn("reconcile failed", "pod", key, "err", err)
		}
	case res.RequeueAfter > 0:
		outcome = ResultRequeueAfter
		c.queue.Forget(key)
		c.queue.AddAfter(key, res.RequeueAfter)
	case res.Requeue:
		outcome = ResultRequeue
		c.queue.AddRateLimited(key)
	default:
		outcome = ResultSuccess
		c.queue.Forget(key)
	}
	c.cfg.Metrics.ReconcileDone(outcome, c.cfg.Clock.Since(start))
	return true
}

// reconcile is Reconcile with a panic in one pod's logic turned into an
// error of that key (logged with its stack) instead of the end of berth.
func (c *Controller) reconcile(ctx context.Context, key string) (res Result, err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			panicked = true
			err = fmt.Errorf("panic: %v", r)
			c.log.Error("reconcile panicked", "pod", key, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	res, err = c.Reconcile(ctx, key)
	return res, err, false
}

// Reconcile makes the containers of pod key match its desired state. It reads
// desired and actual state from the store only (never from an event), plans
// with plan and carries the plan out with execute. While the pod has a
// background operation running it does nothing: the operation enqueues the
// key when it ends.
func (c *Controller) Reconcile(ctx context.Context, key string) (Result, error) {
	if c.ops.busy(key) {
		return Result{}, nil
	}
	pod, err := c.store.Pod(nil, key)
	if err != nil {
		return Result{}, err
	}
	ctrs, err := c.store.ContainersByPod(nil, key)
	if err != nil {
		return Result{}, err
	}
	keep := ""
	if pod != nil {
		keep = string(pod.Spec.UID)
	}
	c.projected.RemoveStale(key, keep, func(uid string) bool { return uidInUse(c.store, uid) })
	in := c.planInput(key, pod, ctrs)
	pl := plan(in)
	return c.execute(ctx, &in, &pl)
}

// planInput reads what plan needs besides the store: backoff state, probe
// verdicts (failures, startup successes) and source sync.
func (c *Controller) planInput(key string, pod *model.Pod, ctrs []*model.Container) PlanInput {
	in := PlanInput{Key: key, Pod: pod, Containers: ctrs, Now: c.cfg.Clock.Now(),
		Synced: map[string]bool{}, Unhealthy: map[string]prober.Kind{}, Started: map[string]bool{}}
	for _, ct := range ctrs {
		if _, ok := in.Synced[ct.Source]; !ok {
			in.Synced[ct.Source] = c.sourceSynced(ct.Source)
		}
		if ct.Running() && ct.Name != model.SandboxName {
			if kind, bad := unhealthy(c.probes, ct); bad {
				in.Unhealthy[ct.ID] = kind
			}
			if c.probes.Result(ct.ID, prober.Startup) == prober.Success {
				in.Started[ct.ID] = true
			}
		}
	}
	if pod == nil {
		return in
	}
	in.Evicted = c.evict.Message(pod)
	uid := string(pod.Spec.UID)
	b := Backoffs{Policy: c.cfg.Backoff, Crash: map[string]restarts.CrashState{}, StartRetry: map[string]time.Time{}, Pulls: map[string]PullState{}}
	names := []string{model.SandboxName}
	for _, ct := range pod.Spec.Spec.InitContainers {
		names = append(names, ct.Name)
	}
	for _, ct := range pod.Spec.Spec.Containers {
		names = append(names, ct.Name)
	}
	for _, n := range names {
		k := uid + "/" + n
		if st := c.restarts.State(k); st.Restarted {
			b.Crash[n] = st
		}
		if at := c.startFails.RetryAt(k); !at.IsZero() {
			b.StartRetry[n] = at
		}
		if ps := c.images.State(k); ps != (PullState{}) {
			b.Pulls[n] = ps
		}
	}
	in.Backoff = b
	return in
}

// sourceSynced reports whether containers labelled with source may be
// collected: the source completed a sync since start, or it is no longer
// configured and every configured source has synced.
func (c *Controller) sourceSynced(name string) bool {
	src, _ := c.store.Source(nil, name)
	if src != nil {
		return src.Synced
	}
	all, _ := c.store.Sources(nil)
	if len(all) == 0 {
		return false
	}
	for _, s := range all {
		if !s.Synced {
			return false
		}
	}
	return true
}

// Idle returns a channel closed once the background operation pod key has
// running now (its stop, its postStart hooks), if any, has ended and the
// key has been enqueued again; closed already when none runs. Tests and
// callers that must see an operation's outcome wait on it instead of
// polling.
func (c *Controller) Idle(key string) <-chan struct{} {
	return c.ops.idle(key)
}

// PauseImageID is the ID sandboxes are made from ("" until the first
// sandbox), which image garbage collection keeps whatever the tag holds.
func (c *Controller) PauseImageID() string {
	return c.pause.Pinned()
}
