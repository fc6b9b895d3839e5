package runtime

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
)

// ImagePresent reports whether image exists locally.
func (d *dockerImages) ImagePresent(ctx context.Context, img string) (bool, error) {
	_, err := d.InspectImage(ctx, img)
	if errors.Is(err, ErrImageNotFound) {
		return false, nil
	}
	return err == nil, err
}

// InspectImage describes the local image img; ErrImageNotFound when absent.
func (d *dockerImages) InspectImage(ctx context.Context, img string) (ImageInfo, error) {
	resp, err := d.cli.ImageInspect(ctx, img)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return ImageInfo{}, fmt.Errorf("image %s: %w", img, ErrImageNotFound)
		}
		return ImageInfo{}, fmt.Errorf("inspect image %s: %w", img, err)
	}
	info := ImageInfo{ID: resp.ID, RepoDigests: resp.RepoDigests}
	if resp.Config != nil {
		info.User = resp.Config.User
		info.Labels = resp.Config.Labels
	}
	return info, nil
}

// ListImages lists the engine's top-level images (not the intermediate ones
// of a build), sorted by ID, in one request.
func (d *dockerImages) ListImages(ctx context.Context) ([]Image, error) {
	list, err := d.cli.ImageList(ctx, image.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	out := make([]Image, 0, len(list))
	for _, s := range list {
		out = append(out, Image{
			ID: s.ID, RepoTags: realRefs(s.RepoTags), RepoDigests: realRefs(s.RepoDigests),
			Created: time.Unix(s.Created, 0), Size: s.Size, Labels: s.Labels,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// realRefs drops the engine's placeholders of a dangling image.
func realRefs(refs []string) []string {
	var out []string
	for _, r := range refs {
		if r != "<none>:<none>" && r != "<none>@<none>" {
			out = append(out, r)
		}
	}
	return out
}

// RemoveImage removes image id with every reference to it and its untagged
// parents; a missing image is not an error. The engine refuses, as
// ErrImageInUse, when a container (in any state) or a child image uses it:
// nothing is forced. The references beyond one are untagged first (the
// engine removes an ID with several only by force), so a refusal leaves the
// image with one of them.
func (d *dockerImages) RemoveImage(ctx context.Context, id string) error {
	info, err := d.cli.ImageInspect(ctx, id)
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove image %s: %w", id, err)
	}
	refs := append(append([]string{}, info.RepoTags...), info.RepoDigests...)
	for i := 1; i < len(refs); i++ {
		if err := d.removeImageRef(ctx, refs[i]); err != nil {
			return fmt.Errorf("remove image %s: %w", id, err)
		}
	}
	if err := d.removeImageRef(ctx, info.ID); err != nil {
		return fmt.Errorf("remove image %s: %w", id, err)
	}
	return nil
}

// removeImageRef deletes ref (a name or an ID) without force.
func (d *dockerImages) removeImageRef(ctx context.Context, ref string) error {
	_, err := d.cli.ImageRemove(ctx, ref, image.RemoveOptions{PruneChildren: true})
	switch {
	case err == nil, cerrdefs.IsNotFound(err):
		return nil
	case cerrdefs.IsConflict(err):
		return fmt.Errorf("%w: %v", ErrImageInUse, err)
	}
	return err
}
