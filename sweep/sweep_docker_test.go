package sweep

// This test runs against the real Docker engine and a real root_dir; `go
// test -short` skips it. The engine is shared: the sweep's image listing
// is narrowed to the images this test built (imagescope), and its pause
// repository is the test's own, so no other image is at stake. Volumes
// are this test's node's only, as the sweep's are.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil/imagescope"
	"github.com/berth-dev/berth/podfs"
	"github.com/berth-dev/berth/runtime"
)

type counts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counts) SweepRemoved(kind string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[kind]++
}

type env struct {
	t    *testing.T
	d    *runtime.Docker
	eng  *imagescope.Engine
	run  string
	node string
}

func (e *env) volume(name string, labels map[string]string) {
	t := e.t
	if err := e.d.CreateVolume(t.Context(), runtime.VolumeConfig{Name: name, Labels: labels, Mode: 0o700}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.d.RemoveVolume(context.Background(), name) })
}

func (e *env) volumeExists(name string) bool {
	vols, err := e.d.ListVolumes(e.t.Context(), map[string]string{runtime.LabelManaged: "true"})
	if err != nil {
		e.t.Fatal(err)
	}
	return slices.ContainsFunc(vols, func(v runtime.VolumeInfo) bool { return v.Name == name })
}

// image builds ref (unique content), in the sweep's view, removed at the end.
func (e *env) image(ref string) string {
	return e.eng.Build(e.t, ref, 512)
}

func (e *env) imageExists(id string) bool {
	_, err := e.d.InspectImage(e.t.Context(), id)
	if err != nil && !errors.Is(err, runtime.ErrImageNotFound) {
		e.t.Fatal(err)
	}
	return err == nil
}

// container creates (never starts) a container of image with labels and
// mounts.
func (e *env) container(name, image string, labels map[string]string, mounts ...runtime.Mount) {
	t := e.t
	id, err := e.d.CreateContainer(t.Context(), &runtime.ContainerConfig{Name: e.run + "-" + name, Image: image, Labels: labels, Mounts: mounts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.d.RemoveContainer(context.Background(), id) })
}

func writeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// TestSweepRealEngine: a leftover pod's Memory volume and directory and an
// old or dangling pause image go; a declared pod's, a pod's whose stopped
// container carries its UID, a claim's volume (of a pod no longer
// declared, even labelled with its UID), a volume a stopped container
// mounts, another node's volume, the current pause image (under any tag),
// a pause image a container uses and one tagged beside another repository
// stay; a symlink planted in root_dir/pods is neither followed nor
// removed, and a symlink inside a leftover pod's directory takes nothing
// outside with it. Nothing created after Before goes.
func TestSweepRealEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a Docker engine; skipped in -short mode")
	}
	d, err := runtime.NewDocker("")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	b := make([]byte, 4)
	rand.Read(b)
	run := "sweeptest-" + hex.EncodeToString(b)
	e := &env{t: t, d: d, eng: imagescope.New(d), run: run, node: run}
	const (
		gone     = "0a000000-0000-4000-8000-000000000001"
		gone2    = "0a000000-0000-4000-8000-000000000002"
		declared = "0a000000-0000-4000-8000-000000000003"
		carried  = "0a000000-0000-4000-8000-000000000004"
		mounted  = "0a000000-0000-4000-8000-000000000005"
		linked   = "0a000000-0000-4000-8000-000000000006"
	)
	testLabel := map[string]string{"io.berth.test.sweep": run}

	// Volumes.
	vol := func(uid string) string { return "berth-" + uid + "-" + run }
	for _, uid := range []string{gone, declared, carried, mounted} {
		e.volume(vol(uid), runtime.VolumeLabels("default", "p", uid, e.node))
	}
	claim := runtime.ClaimVolumeName("file", "default", "data", e.node+"x")
	e.volume(claim, runtime.ClaimVolumeLabels("default", "data", e.node, "file"))
	claimWithUID := runtime.ClaimVolumeLabels("default", "data2", e.node, "file")
	claimWithUID[runtime.LabelPodUID] = gone
	e.volume("claim-like-"+run, claimWithUID)
	otherNode := "berth-" + gone + "-othernode-" + run
	e.volume(otherNode, runtime.VolumeLabels("default", "p", gone, e.node+"-other"))

	// Pod directories.
	root := podfs.New(t.TempDir())
	if err := root.Prepare(); err != nil {
		t.Fatal(err)
	}
	pods := filepath.Join(root.Dir(), "pods")
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret"))
	for _, uid := range []string{gone, declared, carried} {
		writeFile(t, filepath.Join(pods, uid, "volumes", "data", "file"))
	}
	writeFile(t, filepath.Join(pods, gone2, "volumes", "data", "keep"))
	if err := os.Symlink(outside, filepath.Join(pods, gone2, "volumes", "data", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(pods, linked)); err != nil {
		t.Fatal(err)
	}

	// Images.
	repo := run + "/pause"
	old := e.image(repo + ":old")
	current := e.image(repo + ":current")
	if err := d.Client().ImageTag(t.Context(), repo+":current", repo+":alias"); err != nil {
		t.Fatal(err)
	}
	used := e.image(repo + ":used")
	mixed := e.image(repo + ":mixed")
	if err := d.Client().ImageTag(t.Context(), repo+":mixed", run+"/other:1"); err != nil {
		t.Fatal(err)
	}
	app := e.image(run + "/app:1")
	// A rebuilt tag leaves a dangling berth-built image, of any repository.
	dangling := e.image(run + "/app:2")
	rebuilt := e.image(run + "/app:2")

	// Containers: a stopped one of the carried pod, a stopped one mounting
	// the mounted pod's volume without any berth label.
	e.container("carrier", repo+":used", map[string]string{runtime.LabelManaged: "true", runtime.LabelNode: e.node,
		runtime.LabelPodUID: carried, "io.berth.test.sweep": run})
	e.container("mounter", app, testLabel, runtime.Mount{Volume: true, Source: vol(mounted), Target: "/data"})

	m := &counts{n: map[string]int{}}
	cfg := Config{
		Node: e.node, Paths: root, PauseImage: repo + ":current", PauseRepository: repo,
		Before:   time.Now().Add(-time.Hour),
		Declared: func(uid string) bool { return uid == declared },
		Metrics:  m, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	// Everything was created after Before: no volume, no image goes.
	res, err := Run(t.Context(), cfg, e.eng)
	if err != nil {
		t.Fatal(err)
	}
	if len(res[KindVolume]) != 0 || len(res[KindImage]) != 0 || !e.volumeExists(vol(gone)) || !e.imageExists(old) {
		t.Fatalf("volumes or images created after Before were removed: %v", res)
	}
	if !slices.Equal(res[KindPodDir], []string{gone, gone2}) {
		t.Errorf("pod dirs removed %v, want %s and %s", res[KindPodDir], gone, gone2)
	}

	cfg.Before = time.Now().Add(time.Second)
	res, err = Run(t.Context(), cfg, e.eng)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res[KindVolume], []string{vol(gone)}) {
		t.Errorf("volumes removed %v, want only %s", res[KindVolume], vol(gone))
	}
	slices.Sort(res[KindImage])
	wantImages := []string{old, dangling}
	slices.Sort(wantImages)
	if !slices.Equal(res[KindImage], wantImages) {
		t.Errorf("images removed %v, want the old and the dangling pause images %v", res[KindImage], wantImages)
	}
	if m.n[KindVolume] != 1 || m.n[KindPodDir] != 2 || m.n[KindImage] != 2 {
		t.Errorf("metrics %v, want 1 volume, 2 pod dirs, 2 images", m.n)
	}

	for name, want := range map[string]bool{vol(gone): false, vol(declared): true, vol(carried): true, vol(mounted): true,
		claim: true, "claim-like-" + run: true, otherNode: true} {
		if e.volumeExists(name) != want {
			t.Errorf("volume %s exists: %v, want %v", name, !want, want)
		}
	}
	for path, want := range map[string]bool{
		filepath.Join(pods, gone): false, filepath.Join(pods, gone2): false,
		filepath.Join(pods, declared, "volumes", "data", "file"): true,
		filepath.Join(pods, carried, "volumes", "data", "file"):  true,
		filepath.Join(pods, linked):                              true,
		filepath.Join(outside, "secret"):                         true,
	} {
		if exists(path) != want {
			t.Errorf("%s exists: %v, want %v", path, !want, want)
		}
	}
	for name, id := range map[string]string{"current": current, "used": used, "mixed": mixed, "app": app, "rebuilt": rebuilt} {
		if !e.imageExists(id) {
			t.Errorf("image %s (%s) was removed", name, id)
		}
	}
}
