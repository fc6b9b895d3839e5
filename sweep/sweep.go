// Package sweep removes, once every source has synced after berth's start,
// what an earlier run left behind that no pod accounts for: the Memory
// emptyDir volumes and root_dir/pods/<uid> directories of pod UIDs no
// source declares and no container carries (a pod deleted before it had a
// container), and old versions of berth's own pause image. It never
// removes a claim's volume, never follows a symlink in root_dir/pods, and
// leaves anything created after berth started (Config.Before) to the
// controller.
package sweep

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podfs"
	"github.com/berth-dev/berth/runtime"
)

// Engine is the part of the runtime the sweep uses (runtime.Runtime).
type Engine interface {
	ListContainers(ctx context.Context, match map[string]string) ([]*model.Container, error)
	ListVolumes(ctx context.Context, match map[string]string) ([]runtime.VolumeInfo, error)
	RemoveVolume(ctx context.Context, name string) error
	ListImages(ctx context.Context) ([]runtime.Image, error)
	RemoveImage(ctx context.Context, id string) error
	InspectImage(ctx context.Context, image string) (runtime.ImageInfo, error)
}

// Kinds of what the sweep removes, as Metrics and Result name them.
const (
	KindVolume = "volume"
	KindPodDir = "pod_dir"
	KindImage  = "image"
)

// Metrics counts removals (metrics.Metrics implements it).
type Metrics interface {
	// SweepRemoved counts one removal of kind.
	SweepRemoved(kind string)
}

// Config is one node's sweep; every field is required.
type Config struct {
	Node  string
	Paths podfs.Root
	// PauseImage is the configured pause image (pod_infra_image): it stays.
	PauseImage string
	// PauseRepository is the repository of the pause images berth builds
	// (pause.Repository); their other tags are old versions.
	PauseRepository string
	// Before is berth's start: only volumes and images created before it
	// are leftovers.
	Before time.Time
	// Declared reports whether a source declares a pod of this UID now. It
	// is asked again right before each removal.
	Declared func(uid string) bool
	Metrics  Metrics
	Log      *slog.Logger
}

// Result names what the sweep removed, by kind (volume names, pod UIDs,
// image IDs).
type Result map[string][]string

// Run sweeps once. What is in use is read after the candidates are listed,
// so anything listed that a pod or container has by then stays; the engine
// refuses to remove a volume or image a container took since. Failures
// are returned joined; the rest of the sweep goes on.
func Run(ctx context.Context, cfg Config, engine Engine) (Result, error) {
	s := &sweeper{cfg: cfg, engine: engine, res: Result{}}
	vols, err := engine.ListVolumes(ctx, map[string]string{runtime.LabelManaged: "true", runtime.LabelNode: cfg.Node})
	s.fail(err)
	uids, other, err := cfg.Paths.PodUIDs()
	s.fail(err)
	if len(other) > 0 {
		cfg.Log.Warn("startup sweep: entries of root_dir/pods that are not pod directories are left alone", "entries", other)
	}
	images, err := engine.ListImages(ctx)
	s.fail(err)
	ctrs, err := engine.ListContainers(ctx, nil)
	if err != nil {
		s.fail(err)
		return s.res, errors.Join(s.errs...) // nothing is known to be unused
	}
	s.carried, s.imageUsed = map[string]bool{}, map[string]bool{}
	for _, c := range ctrs {
		if c.Labels[runtime.LabelManaged] == "true" && c.PodUID != "" {
			s.carried[c.PodUID] = true
		}
		s.imageUsed[c.ImageID] = true
	}
	s.volumes(ctx, vols)
	s.podDirs(uids)
	s.images(ctx, images)
	return s.res, errors.Join(s.errs...)
}

type sweeper struct {
	cfg       Config
	engine    Engine
	res       Result
	errs      []error
	carried   map[string]bool // pod UIDs of berth's containers, any node
	imageUsed map[string]bool // image IDs of every container
}

func (s *sweeper) fail(err error) {
	if err != nil {
		s.errs = append(s.errs, err)
	}
}

func (s *sweeper) removed(kind, what string, attrs ...any) {
	s.res[kind] = append(s.res[kind], what)
	s.cfg.Metrics.SweepRemoved(kind)
	s.cfg.Log.Info("startup sweep: removed a leftover "+strings.ReplaceAll(kind, "_", " "), append([]any{kind, what}, attrs...)...)
}

// leftover reports whether pod uid is no one's: no source declares it and
// no container of berth's carries it.
func (s *sweeper) leftover(uid string) bool {
	return uid != "" && !s.carried[uid] && !s.cfg.Declared(uid)
}

// volumes removes the pod-scoped volumes (a Memory emptyDir's) of leftover
// UIDs; a claim's volume is never one, whatever its other labels.
func (s *sweeper) volumes(ctx context.Context, vols []runtime.VolumeInfo) {
	for _, v := range vols {
		if claimVolume(v) || !v.CreatedAt.Before(s.cfg.Before) || !s.leftover(v.Labels[runtime.LabelPodUID]) {
			continue
		}
		switch err := s.engine.RemoveVolume(ctx, v.Name); {
		case errors.Is(err, runtime.ErrVolumeInUse):
			s.cfg.Log.Info("startup sweep: a leftover volume is in use; kept", "volume", v.Name, "err", err)
		case err != nil:
			s.fail(err)
		default:
			s.removed(KindVolume, v.Name, "pod_uid", v.Labels[runtime.LabelPodUID])
		}
	}
}

// claimVolume reports whether v holds a PersistentVolumeClaim's data, by
// name or by any claim label.
func claimVolume(v runtime.VolumeInfo) bool {
	if strings.HasPrefix(v.Name, runtime.ClaimVolumePrefix) {
		return true
	}
	for k := range v.Labels {
		if strings.HasPrefix(k, runtime.ClaimLabelPrefix) {
			return true
		}
	}
	return false
}

// podDirs removes the directories of leftover UIDs through podfs, which
// crosses no mount and follows no symlink.
func (s *sweeper) podDirs(uids []string) {
	for _, uid := range uids {
		if !s.leftover(uid) {
			continue
		}
		if err := s.cfg.Paths.RemovePod(uid); err != nil {
			s.fail(err)
			continue
		}
		s.removed(KindPodDir, uid)
	}
}
