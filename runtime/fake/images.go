package fake

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/berth-dev/berth/runtime"
)

// SetImage makes image present with its creation time, size and labels, as
// ListImages reports them.
func (f *Runtime) SetImage(image string, created time.Time, size int64, labels map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.images[image] = true
	f.imageLabels[image] = maps.Clone(labels)
	if f.imageMeta == nil {
		f.imageMeta = map[string]runtime.Image{}
	}
	f.imageMeta[image] = runtime.Image{Created: created, Size: size}
}

// ListImages lists every present image, one per reference (the fake gives
// each reference its own ID).
func (f *Runtime) ListImages(ctx context.Context) ([]runtime.Image, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("ListImages")
	out := make([]runtime.Image, 0, len(f.images))
	for ref := range f.images {
		m := f.imageMeta[ref]
		out = append(out, runtime.Image{ID: fakeImageID(ref), RepoTags: []string{ref}, Created: m.Created, Size: m.Size,
			Labels: maps.Clone(f.imageLabels[ref])})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// RemoveImage removes the image of ID id unless a container, in any state,
// uses it (runtime.ErrImageInUse); a missing image is no error.
func (f *Runtime) RemoveImage(ctx context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("RemoveImage")
	for _, fc := range f.containers {
		if fc.c.ImageID == id {
			return fmt.Errorf("remove image %s: %w by %s", id, runtime.ErrImageInUse, fc.c.DockerName)
		}
	}
	for ref := range f.images {
		if fakeImageID(ref) == id {
			delete(f.images, ref)
			delete(f.imageLabels, ref)
			delete(f.imageMeta, ref)
		}
	}
	return nil
}
