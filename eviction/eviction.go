// Package eviction is the kubelet's eviction manager for what berth
// enforces: disk emptyDirs over their sizeLimit. A housekeeping loop
// measures them and records a verdict per pod incarnation; the
// controller's reconcile reads the verdict and decides, and reclaims the
// pod's emptyDirs once it stopped.
package eviction

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podfs"
	"github.com/berth-dev/berth/store"
)

// DefaultInterval is how often the disk emptyDirs with a sizeLimit are
// measured: the kubelet's eviction housekeeping period.
const DefaultInterval = 10 * time.Second

// Reason is the status reason and event reason of an evicted pod.
const Reason = "Evicted"

// emptyDirMessageFmt is the kubelet's status message (and event) of a pod
// evicted for an emptyDir over its sizeLimit; the trailing space is its.
const emptyDirMessageFmt = "Usage of EmptyDir volume %q exceeds the limit %q. "

// Config is what the manager works with.
type Config struct {
	// Store holds the desired pods and their containers.
	Store *store.Store
	// Paths is root_dir, where the pods' emptyDirs are.
	Paths podfs.Root
	Clock clock.WithTicker
	// Interval is how often Run measures (0: DefaultInterval).
	Interval time.Duration
	Log      *slog.Logger
	// Enqueue is given the key of each pod found over its limit.
	Enqueue func(key string)
	// SpecHash identifies a pod's spec: a verdict holds for the incarnation
	// (UID and spec) measured, and a terminal phase recorded for the spec
	// (model.Pod.TerminalSpec) means the pod ended.
	SpecHash func(*v1.Pod) string
}

// Manager holds the verdicts of the housekeeping passes: the pods (by key)
// whose disk emptyDir exceeded its sizeLimit, for the incarnation
// measured. A pass records and enqueues; the reconcile decides, and
// Reclaim drops the verdict. Safe for concurrent use.
type Manager struct {
	cfg      Config
	mu       sync.Mutex
	verdicts map[string]verdict
}

type verdict struct {
	uid, spec, message string
}

// New returns a manager with no verdict.
func New(cfg Config) *Manager {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Manager{cfg: cfg, verdicts: map[string]verdict{}}
}

// Message is the eviction message recorded for p's incarnation, or "".
func (m *Manager) Message(p *model.Pod) string {
	m.mu.Lock()
	v, ok := m.verdicts[p.Key]
	m.mu.Unlock()
	if !ok || v.uid != string(p.Spec.UID) || v.spec != m.cfg.SpecHash(p.Spec) {
		return ""
	}
	return v.message
}

func (m *Manager) record(p *model.Pod, message string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.verdicts[p.Key] = verdict{uid: string(p.Spec.UID), spec: m.cfg.SpecHash(p.Spec), message: message}
}

// drop forgets the verdict of pod key's incarnation uid.
func (m *Manager) drop(key, uid string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.verdicts[key]; ok && v.uid == uid {
		delete(m.verdicts, key)
	}
}

// prune forgets the verdicts of pods no longer desired under the same UID.
func (m *Manager) prune(pods []*model.Pod) {
	uids := make(map[string]string, len(pods))
	for _, p := range pods {
		uids[p.Key] = string(p.Spec.UID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, v := range m.verdicts {
		if uids[key] != v.uid {
			delete(m.verdicts, key)
		}
	}
}

// Run measures, every Interval of the clock, the disk emptyDirs with a
// sizeLimit of the running pods (Pass), on its own goroutine: the walks
// never hold a worker. It returns when ctx ends.
func (m *Manager) Run(ctx context.Context) {
	t := m.cfg.Clock.NewTicker(m.cfg.Interval)
	defer t.Stop()
	m.passes(ctx, t.C())
}

// passes runs a Pass on each tick until ctx ends.
func (m *Manager) passes(ctx context.Context, tick <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			m.Pass(ctx)
		}
	}
}

// Pass is the kubelet's localStorageEviction for emptyDirs: for each pod
// that is not terminal and runs an app container of its UID, and has no
// verdict yet, it measures each disk emptyDir with a positive sizeLimit
// (in spec order) and, at the first whose usage exceeds it, records the
// verdict and enqueues the pod. Memory emptyDirs are not measured: their
// tmpfs is sized to the limit (podconfig). It returns once the pass ended.
func (m *Manager) Pass(ctx context.Context) {
	pods, err := m.cfg.Store.Pods(nil)
	if err != nil {
		return
	}
	defer m.prune(pods)
	for _, p := range pods {
		if ctx.Err() != nil {
			return
		}
		vols := limitedEmptyDirs(p.Spec)
		if len(vols) == 0 || (p.Terminal != "" && p.TerminalSpec == m.cfg.SpecHash(p.Spec)) || m.Message(p) != "" || !m.runsApp(p) {
			continue
		}
		for _, v := range vols {
			if m.measure(ctx, p, v) {
				break
			}
		}
	}
}

// measure measures emptyDir v of pod p and, when it exceeds its limit,
// records the verdict, enqueues the pod and reports true.
func (m *Manager) measure(ctx context.Context, p *model.Pod, v *v1.Volume) bool {
	log := m.cfg.Log
	limit := v.EmptyDir.SizeLimit
	dir, err := m.cfg.Paths.VolumeDir(string(p.Spec.UID), v.Name)
	if err != nil {
		log.Warn("cannot measure emptyDir", "pod", p.Key, "volume", v.Name, "err", err)
		return false
	}
	u, err := diskUsage(ctx, dir, limit.Value())
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			log.Warn("cannot measure emptyDir", "pod", p.Key, "volume", v.Name, "err", err)
		}
		return false
	}
	if u.truncated {
		log.Warn("emptyDir walk stopped at its bounds; its usage is a lower bound", "pod", p.Key, "volume", v.Name,
			"bytes", u.bytes, "maxEntries", duMaxEntries, "maxDepth", duMaxDepth)
	}
	if u.bytes <= limit.Value() {
		return false
	}
	msg := fmt.Sprintf(emptyDirMessageFmt, v.Name, limit.String())
	log.Info("evicting pod", "pod", p.Key, "volume", v.Name, "usedBytes", u.bytes, "limit", limit.String())
	m.record(p, msg)
	m.cfg.Enqueue(p.Key)
	return true
}

// isDiskEmptyDir reports whether v is an emptyDir on disk, not in memory.
func isDiskEmptyDir(v *v1.Volume) bool {
	return v.EmptyDir != nil && v.EmptyDir.Medium != v1.StorageMediumMemory
}

// limitedEmptyDirs are pod's disk emptyDirs with a positive sizeLimit.
func limitedEmptyDirs(pod *v1.Pod) []*v1.Volume {
	var out []*v1.Volume
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if isDiskEmptyDir(v) && v.EmptyDir.SizeLimit != nil && v.EmptyDir.SizeLimit.Sign() > 0 {
			out = append(out, v)
		}
	}
	return out
}

// runsApp reports whether an app container of p's UID runs, as the store
// saw it: the kubelet evicts only pods that have anything running.
func (m *Manager) runsApp(p *model.Pod) bool {
	ctrs, _ := m.cfg.Store.ContainersByPod(nil, p.Key)
	for _, ct := range ctrs {
		if ct.PodUID == string(p.Spec.UID) && ct.Name != model.SandboxName && ct.Running() {
			return true
		}
	}
	return false
}

// Reclaim removes the disk emptyDir directories of evicted pod, whose
// containers have stopped, as the kubelet tears down the volumes of a
// terminated pod: the space is freed, and a new incarnation (same UID,
// edited spec) starts with empty volumes. The verdict goes with them,
// whatever the outcome (a failure is logged, not retried: the pod stays
// Failed either way).
func (m *Manager) Reclaim(key string, pod *v1.Pod) {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if !isDiskEmptyDir(v) {
			continue
		}
		if err := m.cfg.Paths.RemoveVolume(string(pod.UID), v.Name); err != nil {
			m.cfg.Log.Warn("removing the emptyDir of an evicted pod failed", "pod", key, "volume", v.Name, "err", err)
		}
	}
	m.drop(key, string(pod.UID))
}
