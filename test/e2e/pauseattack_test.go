package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"

	"github.com/berth-dev/berth/config"
	"github.com/berth-dev/berth/pause"
	"github.com/berth-dev/berth/runtime"
)

// TestPushPodCannotNameThePauseImage: a push pod naming the sandbox image's
// repository (any tag, digest or spelling), which a pull would re-tag under
// every later sandbox, is refused at validation by field; a trusted file
// pod naming the pause image with imagePullPolicy Always runs the local
// image and never pulls it.
func TestPushPodCannotNameThePauseImage(t *testing.T) {
	pushFile, push := writeToken(t, "push")
	b := startBerth(t, Options{Env: []string{"BERTH_SOURCES_PUSH_ENABLED=true", "BERTH_SOURCES_PUSH_TOKEN_FILE=" + pushFile}})
	ref := config.DefaultPauseImage()
	_, tag, _ := strings.Cut(ref, ":")
	pod := func(name, image, initImage string) string {
		s := fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  terminationGracePeriodSeconds: 2\n", name)
		if initImage != "" {
			s += fmt.Sprintf("  initContainers:\n  - {name: init, image: %q, imagePullPolicy: Always, args: [exit, \"0\"]}\n", initImage)
		}
		return s + fmt.Sprintf("  containers:\n  - {name: app, image: %q, imagePullPolicy: Always, args: [sleep]}\n", image)
	}
	digest := pause.Repository + "@sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct{ name, manifest, field string }{
		{"tag", pod("tag", ref, ""), "spec.containers[0].image"},
		{"docker-io", pod("docker-io", "docker.io/"+pause.Repository+":"+tag, ""), "spec.containers[0].image"},
		{"other-tag", pod("other-tag", pause.Repository+":latest", ""), "spec.containers[0].image"},
		{"digest", pod("digest", digest, ""), "spec.containers[0].image"},
		{"init", pod("init", testImage, ref), "spec.initContainers[0].image"},
	} {
		code, body := authDo(t, "PUT", b.URL("/pods/default/"+tc.name), push, tc.manifest)
		if code != http.StatusUnprocessableEntity || !strings.Contains(body, tc.field+": Forbidden") || !strings.Contains(body, pause.Repository) {
			t.Errorf("%s: push pod naming the pause repository: %d %s; want 422 naming %s", tc.name, code, body, tc.field)
		}
	}

	// The file source is trusted: its pod runs the local pause image as is.
	writeFile(t, b.Pods, "local-pause.yaml", pod("local-pause", ref, ""))
	waitPodRunning(t, b.Node, "local-pause", "app")
	if log := b.LogText(); strings.Contains(log, "pulling image") && strings.Contains(log, pause.Repository) {
		t.Errorf("berth pulled the pause repository for a pod:\n%s", log)
	}
}

// TestSandboxRunsThePauseImageByID: an image re-tagged as the pause tag
// (carrying the pause program's label) never becomes a sandbox, neither
// while berth runs nor after berth restarts; berth puts its own image back
// under the tag. The tag is shared with every berth on the engine, so the
// test holds it for as short a time as it can and restores it.
func TestSandboxRunsThePauseImageByID(t *testing.T) {
	need(t)
	ref := config.DefaultPauseImage()
	pb, err := pause.Default()
	if err != nil {
		t.Skipf("this berth cannot build its pause image: %v", err)
	}
	impostor := buildImpostor(t, pb.Digest)
	b := startBerth(t, Options{})

	writeFile(t, b.Pods, "first.yaml", podYAML("first", Ctr{Name: "app", Args: []string{"sleep"}}))
	real := inspect(t, waitPodRunning(t, b.Node, "first", "app")["POD"]).Image
	if tagID(t, ref) != real {
		t.Fatalf("the first sandbox runs %s, the tag %s holds %s", real, ref, tagID(t, ref))
	}
	if real == impostor {
		t.Fatal("the impostor is the real pause image")
	}
	attack := func() {
		t.Helper()
		retag(t, impostor, ref)
		t.Cleanup(func() { retag(t, real, ref) })
	}
	sandboxImage := func(pod string) string {
		t.Helper()
		var id string
		waitFor(t, waitLong, "a sandbox of "+pod, func() (bool, string) {
			for _, c := range podContainers(t, b.Node, pod) {
				if c.Labels[runtime.LabelContainerName] == "POD" {
					id = c.ID
					return true, ""
				}
			}
			return false, "none"
		})
		return inspect(t, id).Image
	}

	// While berth runs.
	attack()
	writeFile(t, b.Pods, "second.yaml", podYAML("second", Ctr{Name: "app", Args: []string{"sleep"}}))
	got := sandboxImage("second")
	if got == impostor {
		t.Errorf("after the pause tag moved, a new sandbox runs the impostor %s, not the pause image %s", got, real)
	} else if got != real {
		t.Errorf("a new sandbox runs %s, not the pause image %s", got, real)
	}
	waitFor(t, 10*time.Second, "berth to put its image back under "+ref, func() (bool, string) {
		id := tagID(t, ref)
		return id == real, id
	})
	retag(t, real, ref)

	// Across a restart: the impostor carries the program's label.
	b.Stop(t)
	attack()
	b.Start(t)
	writeFile(t, b.Pods, "third.yaml", podYAML("third", Ctr{Name: "app", Args: []string{"sleep"}}))
	got = sandboxImage("third")
	if got != real {
		t.Errorf("after a restart with the pause tag moved, a new sandbox runs %s (impostor %s), not the pause image %s", got, impostor, real)
	}
	if id := tagID(t, ref); id != real {
		t.Errorf("the pause tag holds %s after berth's start, not its image %s", id, real)
	}
	waitPodRunning(t, b.Node, "third", "app")
}

// tagID is the image ID ref resolves to now.
func tagID(tb testing.TB, ref string) string {
	tb.Helper()
	info, err := cli().ImageInspect(context.Background(), ref)
	if err != nil {
		tb.Fatalf("inspect %s: %v", ref, err)
	}
	return info.ID
}

// retag points ref at image id (docker tag through the API).
func retag(tb testing.TB, id, ref string) {
	tb.Helper()
	if err := cli().ImageTag(context.Background(), id, ref); err != nil {
		tb.Fatalf("tag %s as %s: %v", id, ref, err)
	}
}

// buildImpostor builds, from the harness's testapp image, an image that
// carries the pause program's digest label and blocks like a sandbox (so a
// berth that takes it for the pause image still runs pods), and returns its
// ID. It is removed when the test ends.
func buildImpostor(tb testing.TB, digest string) string {
	tb.Helper()
	df := fmt.Sprintf("FROM %s\nENTRYPOINT [\"/testapp\", \"sleep\"]\nLABEL %s=true %s=%s\n",
		testImage, runtime.LabelBuiltImage, runtime.LabelImageBinary, digest)
	var ctxTar bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(df))}); err != nil {
		tb.Fatal(err)
	}
	if _, err := io.WriteString(tw, df); err != nil {
		tb.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	tag := "berth-e2e/impostor:" + runID + "-" + randHex(3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := cli().ImageBuild(ctx, &ctxTar, build.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true, Version: build.BuilderV1})
	if err != nil {
		tb.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	id := ""
	if info, err := cli().ImageInspect(ctx, tag); err == nil {
		id = info.ID
	} else {
		tb.Fatalf("build the impostor: %v\n%s", err, out)
	}
	// By its own tag and without force: the pause tag may still hold it.
	tb.Cleanup(func() { _, _ = cli().ImageRemove(context.Background(), tag, image.RemoveOptions{}) })
	return id
}
