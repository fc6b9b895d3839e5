package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podconfig"
)

// DefaultEvictionInterval is how often the disk emptyDirs with a sizeLimit
// are measured: the kubelet's eviction housekeeping period.
const DefaultEvictionInterval = 10 * time.Second

// evictedReason is the status reason and event reason of an evicted pod.
const evictedReason = "Evicted"

// emptyDirMessageFmt is the kubelet's status message (and event) of a pod
// evicted for an emptyDir over its sizeLimit; the trailing space is its.
const emptyDirMessageFmt = "Usage of EmptyDir volume %q exceeds the limit %q. "

// The bounds of one volume's walk: an untrusted pod must not make berth's
// housekeeping endless. Past them the walk stops and its sum is a lower
// bound (logged), which still evicts when it exceeds the limit.
const (
	duMaxEntries = 1_000_000
	duMaxDepth   = 512
)

// evictions holds the verdicts of the housekeeping loop: the pods (by key)
// whose disk emptyDir exceeded its sizeLimit, for the incarnation (UID and
// spec hash) measured. The loop records and enqueues; the reconcile
// decides, and the reclaim of the pod's emptyDirs drops the verdict.
type evictions struct {
	mu       sync.Mutex
	verdicts map[string]evictionVerdict
	// passes counts completed housekeeping passes (for tests).
	passes atomic.Int64
}

type evictionVerdict struct {
	uid, spec, message string
}

func newEvictions() *evictions {
	return &evictions{verdicts: map[string]evictionVerdict{}}
}

// message is the eviction message recorded for p's incarnation, or "".
func (e *evictions) message(p *model.Pod) string {
	e.mu.Lock()
	v, ok := e.verdicts[p.Key]
	e.mu.Unlock()
	if !ok || v.uid != string(p.Spec.UID) || v.spec != specHash(p.Spec) {
		return ""
	}
	return v.message
}

func (e *evictions) record(p *model.Pod, message string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.verdicts[p.Key] = evictionVerdict{uid: string(p.Spec.UID), spec: specHash(p.Spec), message: message}
}

// drop forgets the verdict of pod key's incarnation uid.
func (e *evictions) drop(key, uid string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if v, ok := e.verdicts[key]; ok && v.uid == uid {
		delete(e.verdicts, key)
	}
}

// prune forgets the verdicts of pods no longer desired under the same UID.
func (e *evictions) prune(pods []*model.Pod) {
	uids := make(map[string]string, len(pods))
	for _, p := range pods {
		uids[p.Key] = string(p.Spec.UID)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for key, v := range e.verdicts {
		if uids[key] != v.uid {
			delete(e.verdicts, key)
		}
	}
}

// evictionLoop measures, every EvictionInterval of the controller's clock,
// the disk emptyDirs with a sizeLimit of the running pods (evictionPass),
// on its own goroutine: the walks never hold a worker. It returns when ctx
// ends.
func (c *Controller) evictionLoop(ctx context.Context) {
	t := c.cfg.Clock.NewTicker(c.cfg.EvictionInterval)
	defer t.Stop()
	c.evictionPasses(ctx, t.C())
}

// evictionPasses runs an evictionPass on each tick until ctx ends.
func (c *Controller) evictionPasses(ctx context.Context, tick <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			c.evictionPass(ctx)
		}
	}
}

// evictionPass is the kubelet's localStorageEviction for emptyDirs: for
// each pod that is not terminal and runs an app container of its UID, and
// has no verdict yet, it measures each disk emptyDir with a positive
// sizeLimit (in spec order) and, at the first whose usage exceeds it,
// records the verdict and enqueues the pod. Memory emptyDirs are not
// measured: their tmpfs is sized to the limit (podconfig).
func (c *Controller) evictionPass(ctx context.Context) {
	defer c.evictions.passes.Add(1)
	pods, err := c.store.Pods(nil)
	if err != nil {
		return
	}
	defer c.evictions.prune(pods)
	for _, p := range pods {
		if ctx.Err() != nil {
			return
		}
		vols := limitedEmptyDirs(p.Spec)
		if len(vols) == 0 || terminal(p) || c.evictions.message(p) != "" || !c.runsApp(p) {
			continue
		}
		for _, v := range vols {
			limit := v.EmptyDir.SizeLimit
			dir, err := c.paths.VolumeDir(string(p.Spec.UID), v.Name)
			if err != nil {
				c.log.Warn("cannot measure emptyDir", "pod", p.Key, "volume", v.Name, "err", err)
				continue
			}
			u, err := diskUsage(ctx, dir, limit.Value())
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					c.log.Warn("cannot measure emptyDir", "pod", p.Key, "volume", v.Name, "err", err)
				}
				continue
			}
			if u.truncated {
				c.log.Warn("emptyDir walk stopped at its bounds; its usage is a lower bound", "pod", p.Key, "volume", v.Name,
					"bytes", u.bytes, "maxEntries", duMaxEntries, "maxDepth", duMaxDepth)
			}
			if u.bytes > limit.Value() {
				msg := fmt.Sprintf(emptyDirMessageFmt, v.Name, limit.String())
				c.log.Info("evicting pod", "pod", p.Key, "volume", v.Name, "usedBytes", u.bytes, "limit", limit.String())
				c.evictions.record(p, msg)
				c.Enqueue(p.Key)
				break
			}
		}
	}
}

// limitedEmptyDirs are pod's disk emptyDirs with a positive sizeLimit.
func limitedEmptyDirs(pod *v1.Pod) []*v1.Volume {
	var out []*v1.Volume
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.EmptyDir != nil && !podconfig.IsMemoryEmptyDir(v) && v.EmptyDir.SizeLimit != nil && v.EmptyDir.SizeLimit.Sign() > 0 {
			out = append(out, v)
		}
	}
	return out
}

// runsApp reports whether an app container of p's UID runs, as the store
// saw it: the kubelet evicts only pods that have anything running.
func (c *Controller) runsApp(p *model.Pod) bool {
	ctrs, _ := c.store.ContainersByPod(nil, p.Key)
	for _, ct := range ctrs {
		if ct.PodUID == string(p.Spec.UID) && ct.Name != model.SandboxName && ct.Running() {
			return true
		}
	}
	return false
}

// reclaimEmptyDirs removes the disk emptyDir directories of evicted pod,
// whose containers have stopped, as the kubelet tears down the volumes of
// a terminated pod: the space is freed, and a new incarnation (same UID,
// edited spec) starts with empty volumes, which ensureVolumes makes again.
// The verdict goes with them, whatever the outcome (a failure is logged,
// not retried: the pod stays Failed either way).
func (c *Controller) reclaimEmptyDirs(key string, pod *v1.Pod) {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.EmptyDir == nil || podconfig.IsMemoryEmptyDir(v) {
			continue
		}
		if err := c.paths.RemoveVolume(string(pod.UID), v.Name); err != nil {
			c.log.Warn("removing the emptyDir of an evicted pod failed", "pod", key, "volume", v.Name, "err", err)
		}
	}
	c.evictions.drop(key, string(pod.UID))
}

// evictionGrace is how long an evicted pod's containers get to stop: the
// kubelet's immediate eviction (1 s) raised to berth's minimum period, never
// the period the pod chose for itself, which may be unbounded.
const evictionGrace = model.MinGracePeriod

// usage is what diskUsage measured.
type usage struct {
	bytes int64
	// truncated: the walk stopped at its bounds or skipped entries it
	// could not read, so bytes is a lower bound.
	truncated bool
}

// diskUsage sums the space allocated to dir and everything under it as du
// counts it: st_blocks*512 of each inode, once (hard links), from lstat
// (symlinks are not followed), not crossing into other filesystems (mount
// points are skipped). It walks through an os.Root per directory, so
// nothing outside dir is reached even if the tree changes meanwhile, and
// no path grows past PATH_MAX. It stops early once the sum exceeds
// stopAbove (when > 0), at duMaxEntries entries or duMaxDepth levels, and
// when ctx ends. Only a failure to open dir itself is an error.
func diskUsage(ctx context.Context, dir string, stopAbove int64) (usage, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return usage{}, err
	}
	fi, err := root.Stat(".")
	if err != nil {
		root.Close()
		return usage{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		root.Close()
		return usage{}, fmt.Errorf("%s: no stat data", dir)
	}
	w := &duWalk{ctx: ctx, dev: uint64(st.Dev), stop: stopAbove, sum: int64(st.Blocks) * 512, seen: map[[2]uint64]bool{}}
	w.dir(root, fi, 0)
	return usage{bytes: w.sum, truncated: w.truncated}, nil
}

type duWalk struct {
	ctx       context.Context
	dev       uint64
	stop      int64
	sum       int64
	entries   int
	truncated bool
	// seen holds the (dev, ino) of files with more than one link.
	seen map[[2]uint64]bool
}

// done reports whether the walk stops: the sum is over stop, the entry
// bound is reached, or ctx ended.
func (w *duWalk) done() bool {
	return w.entries > duMaxEntries || (w.stop > 0 && w.sum > w.stop) || w.ctx.Err() != nil
}

// dir adds the entries under r (whose own size is counted), then closes r.
func (w *duWalk) dir(r *os.Root, self fs.FileInfo, depth int) {
	defer r.Close()
	f, err := r.Open(".")
	if err != nil {
		w.truncated = true
		return
	}
	defer f.Close()
	if cur, err := f.Stat(); err != nil || !os.SameFile(self, cur) {
		w.truncated = true // replaced since it was looked at
		return
	}
	for !w.done() {
		ents, err := f.ReadDir(256)
		for _, e := range ents {
			if w.entries++; w.entries > duMaxEntries {
				w.truncated = true
				return
			}
			w.entry(r, e.Name(), depth)
			if w.done() {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				w.truncated = true
			}
			return
		}
	}
}

// entry adds name, an entry of r, and what is under it.
func (w *duWalk) entry(r *os.Root, name string, depth int) {
	fi, err := r.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return // removed meanwhile
	}
	if err != nil {
		w.truncated = true
		return
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || uint64(st.Dev) != w.dev {
		return // another filesystem mounted here is not the volume's
	}
	if !fi.IsDir() && st.Nlink > 1 {
		id := [2]uint64{uint64(st.Dev), uint64(st.Ino)}
		if w.seen[id] {
			return
		}
		w.seen[id] = true
	}
	w.sum += int64(st.Blocks) * 512
	if !fi.IsDir() {
		return
	}
	if depth+1 >= duMaxDepth {
		w.truncated = true
		return
	}
	sub, err := r.OpenRoot(name)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			w.truncated = true
		}
		return
	}
	w.dir(sub, fi, depth+1)
}
