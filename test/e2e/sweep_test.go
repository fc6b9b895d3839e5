package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/pause"
	"github.com/berth-dev/berth/runtime"
)

// TestStartupSweep starts berth on a node an earlier run left leftovers
// on: a deleted pod's Memory volume and root_dir/pods/<uid> directory, an
// old pause image, a dangling berth-built image. Once ready, those are
// gone, while a declared pod's extra volume and files, a claim's volume, a
// leftover volume a stopped container mounts, a symlink planted in
// root_dir/pods (and what it points to) and the pause image in use stay.
func TestStartupSweep(t *testing.T) {
	need(t)
	ctx := t.Context()
	node := "e2e-" + runID + "-" + randHex(3)
	root := t.TempDir()
	pods := filepath.Join(root, "pods")
	uid := func() string { return fmt.Sprintf("%s-0000-4000-8000-%s", randHex(4), randHex(6)) }
	gone, declared, mounted, linked := uid(), uid(), uid(), uid()

	mkfile := func(path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mkfile(filepath.Join(pods, gone, "volumes", "cache", "file"))
	mkfile(filepath.Join(pods, declared, "marker"))
	outside := t.TempDir()
	mkfile(filepath.Join(outside, "secret"))
	if err := os.Symlink(outside, filepath.Join(pods, linked)); err != nil {
		t.Fatal(err)
	}

	volume := func(name string, labels map[string]string) string {
		t.Helper()
		if err := dk.CreateVolume(ctx, runtime.VolumeConfig{Name: name, Labels: labels, Mode: 0o700}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = dk.RemoveVolume(context.Background(), name) })
		return name
	}
	goneVol := volume("berth-"+gone+"-shm", runtime.VolumeLabels("default", "gone", gone, node))
	declaredVol := volume("berth-"+declared+"-extra", runtime.VolumeLabels("default", "kept", declared, node))
	mountedVol := volume("berth-"+mounted+"-shm", runtime.VolumeLabels("default", "mounted", mounted, node))
	claimVol := volume(runtime.ClaimVolumeName("file", "default", "data", node), runtime.ClaimVolumeLabels("default", "data", node, "file"))
	mounter, err := dk.CreateContainer(ctx, &runtime.ContainerConfig{Name: "e2e-sweep-mounter-" + node, Image: testImage,
		Labels: map[string]string{labelRun: runID}, Mounts: []runtime.Mount{{Volume: true, Source: mountedVol, Target: "/data"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dk.RemoveContainer(context.Background(), mounter) })

	image := func(ref string) string {
		t.Helper()
		testutil.UniqueImage(t, dk, ref, 512)
		info, err := dk.InspectImage(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = dk.RemoveImage(context.Background(), info.ID) })
		return info.ID
	}
	oldPause := image(pause.Repository + ":e2e-" + node)
	app := "berth-e2e-" + node + "/app:1"
	dangling := image(app)
	image(app)

	podDir := t.TempDir()
	writeFile(t, podDir, "kept.yaml", fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: kept, uid: %q}\nspec:\n"+
		"  terminationGracePeriodSeconds: 2\n  containers:\n    - {name: app, image: %q, args: [serve]}\n", declared, testImage))
	b := startBerth(t, Options{Node: node, Root: root, Pods: podDir})
	ids := waitPodRunning(t, node, "kept", "app")

	imageGone := func(id string) bool {
		_, err := dk.InspectImage(ctx, id)
		return errors.Is(err, runtime.ErrImageNotFound)
	}
	waitFor(t, waitLong, "the leftovers removed", func() (bool, string) {
		left := []string{}
		if volumeExists(t, goneVol) {
			left = append(left, "volume "+goneVol)
		}
		if _, err := os.Lstat(filepath.Join(pods, gone)); err == nil {
			left = append(left, "pods/"+gone)
		}
		if !imageGone(oldPause) {
			left = append(left, "old pause image")
		}
		if !imageGone(dangling) {
			left = append(left, "dangling image")
		}
		return len(left) == 0, strings.Join(left, ", ")
	})
	for _, v := range []string{declaredVol, mountedVol, claimVol} {
		if !volumeExists(t, v) {
			t.Errorf("volume %s was removed", v)
		}
	}
	for _, p := range []string{filepath.Join(pods, declared, "marker"), filepath.Join(pods, linked), filepath.Join(outside, "secret")} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	sandbox := inspect(t, ids["POD"])
	if imageGone(sandbox.Image) {
		t.Errorf("the pause image in use %s was removed", sandbox.Config.Image)
	}
	waitFor(t, 10*time.Second, "the sweep's metrics", func() (bool, string) {
		text, err := b.Metrics()
		if err != nil {
			return false, err.Error()
		}
		v, _ := metricValue(text, `berth_startup_sweep_removed_total{kind="pod_dir"}`)
		return v == 1, fmt.Sprintf("pod_dir removals %v", v)
	})
	waitFor(t, waitLong, "the sweep's end in the log, with the planted symlink", func() (bool, string) {
		log := b.LogText()
		return strings.Contains(log, "startup sweep done") && strings.Contains(log, "not pod directories"), ""
	})
	if os.Geteuid() == 0 { // the engine's root dir is readable: image garbage collection runs
		waitFor(t, waitLong, "image garbage collection started on the engine's disk", func() (bool, string) {
			return strings.Contains(b.LogText(), `msg="image garbage collection" engine_disk=/`), ""
		})
	}
}

func volumeExists(t *testing.T, name string) bool {
	t.Helper()
	vols, err := dk.ListVolumes(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vols {
		if v.Name == name {
			return true
		}
	}
	return false
}
