package fake

import (
	"context"
	"fmt"
	"maps"
	"sort"

	"github.com/berth-dev/berth/runtime"
)

func (f *volumeFake) CreateVolume(ctx context.Context, v runtime.VolumeConfig) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("CreateVolume")
	if _, ok := f.volumes[v.Name]; !ok {
		f.volumes[v.Name] = v
		f.volumeTimes[v.Name] = f.now()
	}
	return nil
}

func (f *volumeFake) RemoveVolume(ctx context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("RemoveVolume")
	for _, fc := range f.containers {
		for _, m := range fc.cfg.Mounts {
			if m.Volume && m.Source == name {
				return fmt.Errorf("remove volume %s: %w by %s", name, runtime.ErrVolumeInUse, fc.c.DockerName)
			}
		}
	}
	delete(f.volumes, name)
	delete(f.volumeTimes, name)
	return nil
}

func (f *volumeFake) ListVolumes(ctx context.Context, match map[string]string) ([]runtime.VolumeInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("ListVolumes")
	var out []runtime.VolumeInfo
	for n, v := range f.volumes {
		if matches(v.Labels, match) {
			out = append(out, runtime.VolumeInfo{Name: n, Labels: v.Labels, CreatedAt: f.volumeTimes[n]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Volumes returns the volumes that exist, by name.
func (f *volumeFake) Volumes() map[string]runtime.VolumeConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.volumes)
}
