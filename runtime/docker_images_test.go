package runtime

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
)

// listed returns the image of ID id as ListImages reports it.
func listed(t *testing.T, d *Docker, id string) (Image, bool) {
	t.Helper()
	list, err := d.ListImages(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range list {
		if im.ID == id {
			return im, true
		}
	}
	return Image{}, false
}

func imageID(t *testing.T, d *Docker, ref string) string {
	t.Helper()
	info, err := d.InspectImage(t.Context(), ref)
	if err != nil {
		t.Fatal(err)
	}
	return info.ID
}

// removeImageAtEnd removes id when the test ends, whatever state it is in.
func removeImageAtEnd(t *testing.T, d *Docker, id string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := d.RemoveImage(ctx, id); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
}

// TestDockerListRemoveImages: ListImages reports tags, labels, size and
// creation time, a dangling image without tags; RemoveImage takes every tag,
// is refused while a stopped container uses the image (which keeps a tag),
// and a missing image is no error.
func TestDockerListRemoveImages(t *testing.T) {
	d := testDocker(t)
	ctx := t.Context()
	repo := "berth-imagetest-" + testRun
	before := time.Now().Add(-time.Second)
	testutil.UniqueImage(t, d, repo+":a", 4096)
	id := imageID(t, d, repo+":a")
	removeImageAtEnd(t, d, id)
	if err := d.cli.ImageTag(ctx, repo+":a", repo+":b"); err != nil {
		t.Fatal(err)
	}
	im, ok := listed(t, d, id)
	if !ok {
		t.Fatalf("image %s not listed", id)
	}
	slices.Sort(im.RepoTags)
	if !slices.Equal(im.RepoTags, []string{repo + ":a", repo + ":b"}) || im.Labels[LabelBuiltImage] != "true" ||
		im.Size < 4096 || im.Created.Before(before.Truncate(time.Second)) {
		t.Errorf("listed %+v, want tags a and b, the built label, size >= 4096, created after %s", im, before)
	}

	// Rebuilding tag a with other content leaves a dangling image.
	testutil.UniqueImage(t, d, repo+":c", 4096)
	dangling := imageID(t, d, repo+":c")
	removeImageAtEnd(t, d, dangling)
	testutil.UniqueImage(t, d, repo+":c", 4096)
	removeImageAtEnd(t, d, imageID(t, d, repo+":c"))
	if im, ok := listed(t, d, dangling); !ok || len(im.RepoTags) != 0 {
		t.Errorf("dangling image listed %+v (%v), want no tags", im, ok)
	}
	if err := d.RemoveImage(ctx, dangling); err != nil {
		t.Errorf("RemoveImage(dangling): %v", err)
	}
	if _, ok := listed(t, d, dangling); ok {
		t.Error("dangling image still listed after RemoveImage")
	}

	// A created, never started container holds the image.
	ctr := create(t, d, &ContainerConfig{Name: containerName("imagetest", "user"), Image: repo + ":a",
		Labels: map[string]string{labelTestRun: testRun}})
	if err := d.RemoveImage(ctx, id); !errors.Is(err, ErrImageInUse) {
		t.Fatalf("RemoveImage of an image a stopped container uses: %v, want ErrImageInUse", err)
	}
	if im, ok := listed(t, d, id); !ok || len(im.RepoTags) != 1 {
		t.Errorf("after the refusal: %+v (%v), want the image with one tag", im, ok)
	}
	if err := d.RemoveContainer(ctx, ctr); err != nil {
		t.Fatal(err)
	}
	if err := d.RemoveImage(ctx, id); err != nil {
		t.Fatalf("RemoveImage: %v", err)
	}
	if _, ok := listed(t, d, id); ok {
		t.Error("image still listed after RemoveImage")
	}
	if err := d.RemoveImage(ctx, id); err != nil {
		t.Errorf("RemoveImage of a missing image: %v", err)
	}
}

// TestDockerRootDir: the engine names its root directory.
func TestDockerRootDir(t *testing.T) {
	d := testDocker(t)
	dir, err := d.RootDir(t.Context())
	if err != nil || dir == "" || dir[0] != '/' {
		t.Errorf("RootDir = %q, %v; want an absolute path", dir, err)
	}
}
