// Package imagescope gives a test on a shared Docker engine a view of it
// that lists only the images the test built. It is apart from testutil
// because it needs package runtime, whose own tests import testutil.
package imagescope

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/runtime"
)

// Engine is the real engine whose ListImages answers only the images Build
// made; every other call goes to the engine as it is.
type Engine struct {
	*runtime.Docker
	mu  sync.Mutex
	ids map[string]bool
}

// New returns d's view with no image in it.
func New(d *runtime.Docker) *Engine { return &Engine{Docker: d, ids: map[string]bool{}} }

// ListImages lists the engine's images that are in the view.
func (e *Engine) ListImages(ctx context.Context) ([]runtime.Image, error) {
	all, err := e.Docker.ListImages(ctx)
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []runtime.Image
	for _, im := range all {
		if e.ids[im.ID] {
			out = append(out, im)
		}
	}
	return out, err
}

// Build builds ref, a unique image of size bytes (testutil.UniqueImage),
// puts it in the view, and removes it when the test ends (an error then
// fails the test); it returns the image's ID.
func (e *Engine) Build(t testing.TB, ref string, size int) string {
	t.Helper()
	testutil.UniqueImage(t, e.Docker, ref, size)
	info, err := e.Docker.InspectImage(t.Context(), ref)
	if err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	e.ids[info.ID] = true
	e.mu.Unlock()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.Docker.RemoveImage(ctx, info.ID); err != nil {
			t.Errorf("cleanup %s: %v", ref, err)
		}
	})
	return info.ID
}
