package runtime

import (
	"context"
	"fmt"
	"sort"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/volume"
)

// CreateVolume creates a local-driver tmpfs volume; the engine keeps an
// existing volume of the same name.
func (d *dockerVolumes) CreateVolume(ctx context.Context, v VolumeConfig) error {
	if v.Persistent {
		if _, err := d.cli.VolumeCreate(ctx, volume.CreateOptions{Name: v.Name, Driver: "local", Labels: v.Labels}); err != nil {
			return fmt.Errorf("create volume %s: %w", v.Name, err)
		}
		return nil
	}
	o := fmt.Sprintf("mode=%o", v.Mode)
	if v.SizeBytes > 0 {
		o += fmt.Sprintf(",size=%d", v.SizeBytes)
	}
	if v.GID != nil {
		o += fmt.Sprintf(",gid=%d", *v.GID)
	}
	_, err := d.cli.VolumeCreate(ctx, volume.CreateOptions{
		Name: v.Name, Driver: "local", Labels: v.Labels,
		DriverOpts: map[string]string{"type": "tmpfs", "device": "tmpfs", "o": o},
	})
	if err != nil {
		return fmt.Errorf("create volume %s: %w", v.Name, err)
	}
	return nil
}

// RemoveVolume removes a volume; a missing one is not an error.
func (d *dockerVolumes) RemoveVolume(ctx context.Context, name string) error {
	err := d.cli.VolumeRemove(ctx, name, false)
	switch {
	case err == nil, cerrdefs.IsNotFound(err):
		return nil
	case cerrdefs.IsConflict(err):
		return fmt.Errorf("remove volume %s: %w: %v", name, ErrVolumeInUse, err)
	}
	return fmt.Errorf("remove volume %s: %w", name, err)
}

// ListVolumes describes the volumes carrying all labels in match.
func (d *dockerVolumes) ListVolumes(ctx context.Context, match map[string]string) ([]VolumeInfo, error) {
	list, err := d.cli.VolumeList(ctx, volume.ListOptions{Filters: labelFilters(match)})
	if err != nil {
		return nil, fmt.Errorf("list volumes: %w", err)
	}
	out := make([]VolumeInfo, 0, len(list.Volumes))
	for _, v := range list.Volumes {
		at, _ := time.Parse(time.RFC3339, v.CreatedAt)
		out = append(out, VolumeInfo{Name: v.Name, Labels: v.Labels, CreatedAt: at})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
