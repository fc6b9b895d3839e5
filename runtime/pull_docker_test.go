package runtime

import (
	"context"
	"crypto/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"

	"github.com/berth-dev/berth/internal/testutil"
)

// A real pull from a registry reports growing progress that ends at the
// layer's size, and leaves the image present.
func TestDockerPullReportsProgress(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	reg := testutil.NewRegistry(t)
	data := make([]byte, 2<<20) // random: gzip keeps its size
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	ref, size := reg.AddImage(t, "berth-test/progress", randHex(4), map[string][]byte{"/data": data}, []string{"/data"})
	reg.Throttle(1 << 20) // about 2 s: the engine reports several steps
	t.Cleanup(func() { _, _ = d.Client().ImageRemove(context.Background(), ref, image.RemoveOptions{Force: true}) })

	var mu sync.Mutex
	var seen []PullProgress
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if err := d.PullImage(ctx, ref, nil, func(p PullProgress) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, p)
	}); err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 3 {
		t.Fatalf("progress reports %v, want several", seen)
	}
	var partial bool
	for i, p := range seen {
		if p.Done > p.Total {
			t.Errorf("report %d: done %d beyond total %d", i, p.Done, p.Total)
		}
		if i > 0 && p.Done < seen[i-1].Done {
			t.Errorf("report %d went back: %v after %v", i, p, seen[i-1])
		}
		if p.Total == int64(size) && p.Done > 0 && p.Done < p.Total {
			partial = true
		}
	}
	if !partial {
		t.Errorf("no report of a part of the %d-byte layer: %v", size, seen)
	}
	last := seen[len(seen)-1]
	if last.Done != int64(size) || last.Total != int64(size) || last.Layers != 1 || last.LayersDone != 1 {
		t.Errorf("last report %+v, want %d of %d bytes, 1/1 layers", last, size, size)
	}
	info, err := d.InspectImage(ctx, ref)
	if err != nil {
		t.Fatalf("image after pull: %v", err)
	}
	if len(info.RepoDigests) == 0 || !strings.Contains(info.RepoDigests[0], "@sha256:") {
		t.Errorf("repo digests after pull = %v, want repo@sha256:...", info.RepoDigests)
	}
}
