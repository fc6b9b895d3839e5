package imagegc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/distribution/reference"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

// Engine is the part of the runtime the collector uses (runtime.Runtime).
type Engine interface {
	ListImages(ctx context.Context) ([]runtime.Image, error)
	RemoveImage(ctx context.Context, id string) error
	ListContainers(ctx context.Context, match map[string]string) ([]*model.Container, error)
	InspectImage(ctx context.Context, image string) (runtime.ImageInfo, error)
}

// DiskUsage reads the usage of the filesystem holding the engine's images.
type DiskUsage func(ctx context.Context) (Usage, error)

// Metrics receives each removal (metrics.Metrics implements it).
type Metrics interface {
	// ImageGCRemoved counts one image removed and the bytes it held.
	ImageGCRemoved(bytes int64)
}

// Config configures a Collector; every field is required.
type Config struct {
	Policy Policy
	Disk   DiskUsage
	// Keep returns references of images that stay even when no container
	// uses them: the configured pause image and the images the desired
	// pods name. It is called only when a collection is due.
	Keep    func() []string
	Clock   clock.WithTicker
	Metrics Metrics
	Log     *slog.Logger
}

// Collector is the image garbage collector of one engine. Make one with
// New; it is safe for concurrent use (collections run one at a time).
type Collector struct {
	cfg    Config
	engine Engine
	mu     sync.Mutex
	seen   tracker
}

// New returns a Collector of engine.
func New(cfg Config, engine Engine) *Collector {
	return &Collector{cfg: cfg, engine: engine}
}

// Result is what one collection saw and did.
type Result struct {
	Usage   Usage
	Plan    Plan
	Removed []Record
	Freed   int64
}

// ErrShort is wrapped when a collection could not free BytesToFree: too
// few images were unused, old enough, or removable.
var ErrShort = errors.New("not enough unused images to free")

// Run collects once now, then every Period, until ctx ends; failures are
// logged and the next period tries again.
func (c *Collector) Run(ctx context.Context) {
	t := c.cfg.Clock.NewTicker(Period)
	defer t.Stop()
	for {
		if res, err := c.Collect(ctx); err != nil && ctx.Err() == nil {
			c.cfg.Log.Warn("image garbage collection", "err", err, "usage_percent", res.Usage.Percent(),
				"removed", len(res.Removed), "freed_bytes", res.Freed)
		} else if len(res.Removed) > 0 {
			c.cfg.Log.Info("image garbage collection", "usage_percent", res.Usage.Percent(),
				"removed", len(res.Removed), "freed_bytes", res.Freed)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// Collect is one collection: it lists images and containers (any
// container on the engine, in any state, marks its image used now) and,
// when the disk is at or over the high threshold, removes the plan's
// candidates in turn until BytesToFree are freed. An image the engine
// refuses to remove (a container took it since) is skipped.
func (c *Collector) Collect(ctx context.Context) (Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var res Result
	images, err := c.engine.ListImages(ctx)
	if err != nil {
		return res, err
	}
	ctrs, err := c.engine.ListContainers(ctx, nil)
	if err != nil {
		return res, err
	}
	used := map[string]bool{}
	for _, ct := range ctrs {
		used[ct.ImageID] = true
	}
	now := c.cfg.Clock.Now()
	recs := c.seen.observe(images, used, now)
	if res.Usage, err = c.cfg.Disk(ctx); err != nil {
		return res, fmt.Errorf("disk usage: %w", err)
	}
	if !c.cfg.Policy.Due(res.Usage) {
		return res, nil
	}
	for _, ref := range c.cfg.Keep() {
		if _, err := reference.ParseNormalizedNamed(ref); err != nil {
			continue // no local image has it (a pod's bad image fails its pull)
		}
		if info, err := c.engine.InspectImage(ctx, ref); err == nil {
			used[info.ID] = true
		} else if !errors.Is(err, runtime.ErrImageNotFound) {
			return res, fmt.Errorf("image %s to keep: %w", ref, err)
		}
	}
	res.Plan = c.cfg.Policy.Plan(res.Usage, recs, used, now)
	var errs []error
	for _, r := range res.Plan.Candidates {
		if res.Freed >= res.Plan.BytesToFree || ctx.Err() != nil {
			break
		}
		if err := c.engine.RemoveImage(ctx, r.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		c.cfg.Log.Info("image removed", "image", r.ID, "bytes", r.Size, "last_used", r.LastUsed, "created", r.Created)
		c.cfg.Metrics.ImageGCRemoved(r.Size)
		res.Removed = append(res.Removed, r)
		res.Freed += r.Size
	}
	if res.Freed < res.Plan.BytesToFree {
		errs = append(errs, fmt.Errorf("%w: %d bytes to free, %d freed", ErrShort, res.Plan.BytesToFree, res.Freed))
	}
	return res, errors.Join(errs...)
}
