package controller

import (
	"context"
	"errors"
	"sync"

	"github.com/berth-dev/berth/runtime"
)

// volumeUIDs knows which pod UIDs may have engine volumes (Memory
// emptyDirs) on this node: those the engine listed once, at the first
// question, and those a volume was created for since. A pod's removal then
// lists its volumes only when it may have some, instead of once per pod.
// It may answer yes for a UID whose volumes went another way (one list
// too many); never no for one that has some, as long as every volume of
// the node's pods is created through creator.
type volumeUIDs struct {
	rt   runtime.Runtime
	node string

	mu     sync.Mutex
	loaded bool
	uids   map[string]bool
}

func newVolumeUIDs(rt runtime.Runtime, node string) *volumeUIDs {
	return &volumeUIDs{rt: rt, node: node, uids: map[string]bool{}}
}

// mayHave reports whether uid may have engine volumes. When the engine
// cannot be asked the first time, the answer is yes (and it is asked
// again next time).
func (v *volumeUIDs) mayHave(ctx context.Context, uid string) bool {
	v.mu.Lock()
	loaded := v.loaded
	v.mu.Unlock()
	if !loaded {
		vols, err := v.rt.ListVolumes(ctx, map[string]string{runtime.LabelManaged: "true", runtime.LabelNode: v.node})
		if err != nil {
			return true
		}
		v.mu.Lock()
		for _, vol := range vols {
			if u := vol.Labels[runtime.LabelPodUID]; u != "" {
				v.uids[u] = true
			}
		}
		v.loaded = true
		v.mu.Unlock()
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.uids[uid]
}

// removed records that uid's volumes are gone.
func (v *volumeUIDs) removed(uid string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.uids, uid)
}

// creator is the engine for pod uid's volumes: each creation is recorded
// before the engine is asked.
func (v *volumeUIDs) creator(uid string) volumeCreator { return volumeCreator{v: v, uid: uid} }

type volumeCreator struct {
	v   *volumeUIDs
	uid string
}

func (c volumeCreator) CreateVolume(ctx context.Context, cfg runtime.VolumeConfig) error {
	c.v.mu.Lock()
	c.v.uids[c.uid] = true
	c.v.mu.Unlock()
	return c.v.rt.CreateVolume(ctx, cfg)
}

// remove drops the engine volumes of pod uid's Memory emptyDirs,
// found by label (the spec may be gone); their containers must be gone.
func (v *volumeUIDs) remove(ctx context.Context, uid string) error {
	vols, err := v.rt.ListVolumes(ctx, map[string]string{runtime.LabelManaged: "true", runtime.LabelPodUID: uid, runtime.LabelNode: v.node})
	if err != nil {
		return err
	}
	var errs []error
	for _, vol := range vols {
		errs = append(errs, v.rt.RemoveVolume(ctx, vol.Name))
	}
	return errors.Join(errs...)
}
