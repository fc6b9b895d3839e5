package imagegc

// These tests run against the real Docker engine; `go test -short` skips
// them. They build tiny FROM-scratch images of their own and collect only
// those: the engine is shared, so the listing the collector sees is
// narrowed to the test's images (scoped), while in-use detection,
// removal and the engine's refusals are the real engine's.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/internal/testutil/imagescope"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

// scoped is the real engine with ListImages narrowed to the test's images
// and ListContainers hiding the containers in hide (a container the
// listing missed, as one created after it).
type scoped struct {
	*imagescope.Engine
	mu   sync.Mutex
	hide map[string]bool
}

func (s *scoped) ListContainers(ctx context.Context, match map[string]string) ([]*model.Container, error) {
	all, err := s.Docker.ListContainers(ctx, match)
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*model.Container
	for _, c := range all {
		if !s.hide[c.ID] {
			out = append(out, c)
		}
	}
	return out, err
}

func dockerEngine(t *testing.T) *runtime.Docker {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a Docker engine; skipped in -short mode")
	}
	d, err := runtime.NewDocker("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.Ping(t.Context()); err != nil {
		t.Fatalf("Docker engine unreachable (is dockerd running?): %v", err)
	}
	return d
}

// recorder is a Metrics that keeps every removal.
type recorder struct {
	mu    sync.Mutex
	bytes []int64
}

func (r *recorder) ImageGCRemoved(b int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bytes = append(r.bytes, b)
}

type testImages struct {
	t    *testing.T
	d    *runtime.Docker
	eng  *scoped
	repo string
	id   map[string]string // name → ID
	size map[string]int64
}

// build builds repo:name, a unique tiny image, and removes it at the end.
func (ti *testImages) build(name string) {
	t := ti.t
	ref := ti.repo + ":" + name
	id := ti.eng.Build(t, ref, 4096)
	ti.id[name] = id
	list, err := ti.eng.ListImages(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range list {
		if im.ID == id {
			ti.size[name] = im.Size
		}
	}
}

// use creates (never starts) a container of image name; the returned func
// removes it.
func (ti *testImages) use(name string) (string, func()) {
	t := ti.t
	id, err := ti.d.CreateContainer(t.Context(), &runtime.ContainerConfig{
		Name: ti.repo + "-user-" + name, Image: ti.repo + ":" + name,
		Labels: map[string]string{"io.berth.test.imagegc": ti.repo},
	})
	if err != nil {
		t.Fatal(err)
	}
	rm := func() {
		if err := ti.d.RemoveContainer(context.Background(), id); err != nil {
			t.Errorf("remove container: %v", err)
		}
	}
	t.Cleanup(rm)
	return id, rm
}

func (ti *testImages) present(name string) bool {
	_, err := ti.d.InspectImage(ti.t.Context(), ti.id[name])
	if err != nil && !errors.Is(err, runtime.ErrImageNotFound) {
		ti.t.Fatal(err)
	}
	return err == nil
}

func (ti *testImages) names(rs []Record) []string {
	byID := map[string]string{}
	for n, id := range ti.id {
		byID[id] = n
	}
	var out []string
	for _, r := range rs {
		out = append(out, byID[r.ID])
	}
	return out
}

// TestCollectRealEngine: over the threshold, exactly the unused images go,
// least recently used first (never used: by creation), until the bytes to
// free are freed; an image a container uses, one to keep (the pause image,
// a desired pod's) and one first seen under MinAge ago stay. A container
// the listing missed makes the engine refuse its image, which stays.
func TestCollectRealEngine(t *testing.T) {
	d := dockerEngine(t)
	b := make([]byte, 4)
	rand.Read(b)
	eng := &scoped{Engine: imagescope.New(d), hide: map[string]bool{}}
	ti := &testImages{t: t, d: d, eng: eng, repo: "berth-gctest-" + hex.EncodeToString(b), id: map[string]string{}, size: map[string]int64{}}
	for _, n := range []string{"never", "a", "b", "c", "user", "keep"} {
		ti.build(n)
	}
	userCtr, _ := ti.use("user")

	var mu sync.Mutex
	usage := Usage{Capacity: 1 << 30, Available: 1 << 30}
	disk := func(context.Context) (Usage, error) { mu.Lock(); defer mu.Unlock(); return usage, nil }
	setToFree := func(n int64) {
		mu.Lock()
		defer mu.Unlock()
		usage.Available = usage.Capacity*60/100 - n
	}
	// The clock runs an hour ahead: every image was created before any
	// use the collector sees.
	clk := clocktesting.NewFakeClock(time.Now().Add(time.Hour))
	m := &recorder{}
	keepCalls := 0
	c := New(Config{
		Policy: Policy{HighThresholdPercent: 41, LowThresholdPercent: 40, MinAge: MinAge},
		Disk:   disk,
		Keep:   func() []string { keepCalls++; return []string{ti.repo + ":keep", ti.repo + ":absent", "Bad:Ref"} },
		Clock:  clk, Metrics: m, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, eng)
	collect := func() Result {
		t.Helper()
		res, err := c.Collect(t.Context())
		if err != nil {
			t.Fatalf("Collect: %v", err)
		}
		return res
	}

	// c, then a, then b are used in turn (not their build order), a minute
	// apart; the disk is fine.
	for _, n := range []string{"c", "a", "b"} {
		_, rm := ti.use(n)
		if res := collect(); len(res.Removed) != 0 || res.Plan.BytesToFree != 0 {
			t.Fatalf("below the threshold: %+v", res)
		}
		rm()
		clk.Step(time.Minute)
	}
	if keepCalls != 0 {
		t.Errorf("Keep called %d times below the threshold", keepCalls)
	}
	ti.build("late") // first seen by the next collection
	clk.Step(10 * time.Minute)

	want := ti.size["never"] + ti.size["c"] + 1
	setToFree(want)
	res := collect()
	if res.Plan.BytesToFree != want {
		t.Fatalf("BytesToFree = %d, want %d (usage %d%%)", res.Plan.BytesToFree, want, res.Usage.Percent())
	}
	if got := ti.names(res.Plan.Candidates); !slices.Equal(got, []string{"never", "c", "a", "b"}) {
		t.Errorf("candidates %v, want never, c, a, b (user in use, keep kept, late too new)", got)
	}
	if got := ti.names(res.Removed); !slices.Equal(got, []string{"never", "c", "a"}) {
		t.Errorf("removed %v, want never, c, a", got)
	}
	if res.Freed != want-1+ti.size["a"] || len(m.bytes) != 3 {
		t.Errorf("freed %d (metrics %v), want %d", res.Freed, m.bytes, want-1+ti.size["a"])
	}
	for n, present := range map[string]bool{"never": false, "c": false, "a": false, "b": true, "user": true, "keep": true, "late": true} {
		if ti.present(n) != present {
			t.Errorf("image %s present: %v, want %v", n, !present, present)
		}
	}

	// The user's container is created after the listing: the engine
	// refuses its image; late (now old enough) and b go.
	eng.mu.Lock()
	eng.hide[userCtr] = true
	eng.mu.Unlock()
	clk.Step(MinAge)
	setToFree(1 << 20)
	res, err := c.Collect(t.Context())
	if !errors.Is(err, runtime.ErrImageInUse) || !errors.Is(err, ErrShort) {
		t.Errorf("Collect: %v, want ErrImageInUse and ErrShort", err)
	}
	if got := ti.names(res.Removed); !slices.Equal(got, []string{"late", "b"}) {
		t.Errorf("removed %v, want late, b", got)
	}
	if !ti.present("user") || !ti.present("keep") {
		t.Error("the used image or the kept one is gone")
	}
}
