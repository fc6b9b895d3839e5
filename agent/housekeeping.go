package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/berth-dev/berth/imagegc"
	"github.com/berth-dev/berth/pause"
	"github.com/berth-dev/berth/podfs"
	"github.com/berth-dev/berth/server"
	"github.com/berth-dev/berth/sweep"
)

// housekeeping waits until every source has synced (what /readyz waits
// for), sweeps once what earlier runs left behind, then collects unused
// images at once and every imagegc.Period until ctx ends. Only what was
// created before it began counts as left behind.
func (a *Agent) housekeeping(ctx context.Context) {
	before := a.clock.Now()
	synced := server.SourcesSynced(a.st)
	if !waitUntil(ctx, func() bool { return synced(ctx) == nil }) {
		return
	}
	res, err := sweep.Run(ctx, sweep.Config{
		Node: a.cfg.NodeName, Paths: podfs.New(a.cfg.RootDir), PauseImage: a.cfg.PodInfraImage,
		PauseRepository: pause.Repository, Before: before, Declared: a.declared, Metrics: a.metrics, Log: a.log,
	}, a.rt)
	if err != nil {
		a.log.Warn("startup sweep: some leftovers were not removed", "err", err)
	}
	a.log.Info("startup sweep done", "volumes", len(res[sweep.KindVolume]), "pod_dirs", len(res[sweep.KindPodDir]),
		"images", len(res[sweep.KindImage]))

	if a.cfg.ImageGCHighThreshold >= 100 {
		a.log.Info("image garbage collection is off (image_gc.high_threshold is 100)")
		return
	}
	disk, err := a.imageDisk(ctx)
	if err != nil {
		a.log.Warn("image garbage collection is off: the engine's disk cannot be read", "err", err)
		return
	}
	imagegc.New(imagegc.Config{
		Policy: imagegc.Policy{HighThresholdPercent: a.cfg.ImageGCHighThreshold, LowThresholdPercent: a.cfg.ImageGCLowThreshold,
			MinAge: imagegc.MinAge},
		Disk: disk, Keep: a.keepImages, Clock: a.clock, Metrics: a.metrics, Log: a.log,
	}, a.rt).Run(ctx)
}

// imageDisk reads the filesystem of the engine's DockerRootDir, which must
// be visible here: a local engine, berth on its host or in a container
// sharing the host's PID namespace (see imagegc.EngineDir).
func (a *Agent) imageDisk(ctx context.Context) (imagegc.DiskUsage, error) {
	if !strings.HasPrefix(a.cfg.DockerHost, "unix://") {
		return nil, fmt.Errorf("docker.host %s is not a local socket", a.cfg.DockerHost)
	}
	root, err := a.rt.RootDir(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := imagegc.EngineDir(root)
	if err != nil {
		return nil, err
	}
	a.log.Info("image garbage collection", "engine_disk", dir, "high_threshold", a.cfg.ImageGCHighThreshold,
		"low_threshold", a.cfg.ImageGCLowThreshold)
	return imagegc.Statfs(dir), nil
}

// declared reports whether a desired pod has uid.
func (a *Agent) declared(uid string) bool {
	pods, _ := a.st.Pods(nil)
	for _, p := range pods {
		if string(p.Spec.UID) == uid {
			return true
		}
	}
	return false
}

// keepImages are the images collection leaves even when unused: the
// desired pods', the configured pause image and the ID sandboxes are made
// from (which the tag may no longer hold).
func (a *Agent) keepImages() []string {
	pods, _ := a.st.Pods(nil)
	keep := append(imagegc.PodImages(pods), a.cfg.PodInfraImage)
	if id := a.ctrl.PauseImageID(); id != "" {
		keep = append(keep, id)
	}
	return keep
}
