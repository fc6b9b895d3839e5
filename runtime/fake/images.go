package fake

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/berth-dev/berth/runtime"
)

// AddImage makes image present.
func (f *imageFake) AddImage(image string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.images[image] = true
}

// SetImage makes image present with its creation time, size and labels, as
// ListImages reports them.
func (f *imageFake) SetImage(image string, created time.Time, size int64, labels map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.images[image] = true
	f.imageLabels[image] = maps.Clone(labels)
	if f.imageMeta == nil {
		f.imageMeta = map[string]runtime.Image{}
	}
	f.imageMeta[image] = runtime.Image{Created: created, Size: size}
}

func (f *imageFake) InspectImage(ctx context.Context, image string) (runtime.ImageInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("InspectImage")
	id, ok := f.lookupImage(image)
	if !ok {
		return runtime.ImageInfo{}, fmt.Errorf("image %s: %w", image, runtime.ErrImageNotFound)
	}
	return runtime.ImageInfo{ID: id, Labels: f.imageLabels[image]}, nil
}

// ListImages lists every present image, one per reference (the fake gives
// each reference its own ID).
func (f *imageFake) ListImages(ctx context.Context) ([]runtime.Image, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("ListImages")
	out := make([]runtime.Image, 0, len(f.images))
	for ref := range f.images {
		m := f.imageMeta[ref]
		out = append(out, runtime.Image{ID: f.idOfLocked(ref), RepoTags: []string{ref}, Created: m.Created, Size: m.Size,
			Labels: maps.Clone(f.imageLabels[ref])})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// RemoveImage removes the image of ID id unless a container, in any state,
// uses it (runtime.ErrImageInUse); a missing image is no error.
func (f *imageFake) RemoveImage(ctx context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("RemoveImage")
	for _, fc := range f.containers {
		if fc.c.ImageID == id {
			return fmt.Errorf("remove image %s: %w by %s", id, runtime.ErrImageInUse, fc.c.DockerName)
		}
	}
	for ref := range f.images {
		if f.idOfLocked(ref) == id {
			delete(f.images, ref)
			delete(f.imageLabels, ref)
			delete(f.imageMeta, ref)
			delete(f.imageIDs, ref)
		}
	}
	delete(f.dangling, id)
	delete(f.content, id)
	return nil
}

func (f *imageFake) PullImage(ctx context.Context, image string, creds *runtime.Credentials, progress func(runtime.PullProgress)) error {
	f.mu.Lock()
	block, steps := f.PullBlock, f.PullSteps
	f.mu.Unlock()
	for _, p := range steps {
		if progress != nil {
			progress(p)
		}
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("PullImage")
	if f.PullErr != nil {
		return f.PullErr
	}
	f.images[image] = true
	return nil
}

// ReplaceImage puts under ref a new image with labels, of unknown content
// (ImageContent reports no layer): an impostor re-tagged as ref. The image
// ref held before stays usable by its ID.
func (f *imageFake) ReplaceImage(ref string, labels map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	f.replaceLocked(ref, fakeImageID(fmt.Sprintf("%s#%d", ref, f.seq)))
	f.imageLabels[ref] = maps.Clone(labels)
}

// ImageContent is what a built image holds; another present image holds
// no layer and an empty config.
func (f *imageFake) ImageContent(ctx context.Context, image string, limit int64) (runtime.ImageContent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("ImageContent")
	id, ok := f.lookupImage(image)
	if !ok {
		return runtime.ImageContent{}, fmt.Errorf("image %s: %w", image, runtime.ErrImageNotFound)
	}
	c, ok := f.content[id]
	if !ok {
		return runtime.ImageContent{ID: id}, nil
	}
	var size int64
	for _, l := range c.Layers {
		for _, e := range l.Entries {
			size += e.Size
		}
	}
	if size > limit {
		return runtime.ImageContent{}, fmt.Errorf("image %s: %w", image, runtime.ErrImageTooLarge)
	}
	return c, nil
}

// lookupImage is the ID of image, a present reference or the ID of a
// present or replaced image. Callers hold f.mu.
func (f *state) lookupImage(image string) (string, bool) {
	if f.images[image] {
		return f.idOfLocked(image), true
	}
	if f.dangling[image] {
		return image, true
	}
	for ref := range f.images {
		if f.idOfLocked(ref) == image {
			return image, true
		}
	}
	return "", false
}

func (f *state) idOfLocked(ref string) string {
	if id, ok := f.imageIDs[ref]; ok {
		return id
	}
	return fakeImageID(ref)
}

// replaceLocked gives ref a new image of ID id, the old one kept by ID
// (dangling) as the engine keeps an untagged image.
func (f *state) replaceLocked(ref, id string) {
	if f.images[ref] {
		if old := f.idOfLocked(ref); old != id {
			f.dangling[old] = true
		}
	}
	f.images[ref] = true
	f.imageIDs[ref] = id
	delete(f.dangling, id)
}
