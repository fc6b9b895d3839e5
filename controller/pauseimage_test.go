package controller

import (
	"archive/tar"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/pause"
	"github.com/berth-dev/berth/runtime"
)

// sandboxImage is the image the running sandbox of pod key was made from.
func (h *harness) sandboxImage(key string) string {
	h.t.Helper()
	sb := h.running(key)["POD"]
	if sb == nil {
		h.t.Fatalf("no sandbox of %s runs", key)
	}
	cfg, _ := h.rt.Config(sb.ID)
	if cfg.Image != sb.ImageID {
		h.t.Fatalf("sandbox of %s made from %q, which is not its image ID %s", key, cfg.Image, sb.ImageID)
	}
	return sb.ImageID
}

// An image under the pause tag that carries the program's label but not
// its content is never a sandbox: berth builds its own and makes
// sandboxes from that ID.
func TestPauseImageCheckedByContentNotLabel(t *testing.T) {
	h := newHarness(t)
	b := testPauseBuild()
	h.rt.ReplaceImage("berth/pause:test", map[string]string{runtime.LabelImageBinary: b.Digest})
	impostor, _ := h.rt.InspectImage(t.Context(), "berth/pause:test")
	h.put(testPod("web", ctr("a", "app:1")))
	h.settle("default/web")
	got := h.sandboxImage("default/web")
	if got == impostor.ID {
		t.Fatal("the sandbox runs the labelled impostor")
	}
	if h.rt.CallCount("BuildImageData") != 1 {
		t.Errorf("%d builds, want 1", h.rt.CallCount("BuildImageData"))
	}
	if tagged, _ := h.rt.InspectImage(t.Context(), "berth/pause:test"); tagged.ID != got {
		t.Errorf("the tag holds %s, the sandbox runs %s", tagged.ID, got)
	}
}

// When the tag moves while berth runs, new sandboxes keep the checked ID
// and berth puts its image back under the tag.
func TestSandboxKeepsPinnedIDWhenTagMoves(t *testing.T) {
	h := newHarness(t)
	h.put(testPod("first", ctr("a", "app:1")))
	h.settle("default/first")
	real := h.sandboxImage("default/first")
	if h.ctrl.PauseImageID() != real {
		t.Errorf("PauseImageID %q, want %s", h.ctrl.PauseImageID(), real)
	}
	h.rt.ReplaceImage("berth/pause:test", map[string]string{runtime.LabelImageBinary: testPauseBuild().Digest})
	h.put(testPod("second", ctr("a", "app:1")))
	h.settle("default/second")
	if got := h.sandboxImage("default/second"); got != real {
		t.Errorf("after the tag moved the sandbox runs %s, want the checked %s", got, real)
	}
	h.ctrl.pause.recheck(t.Context())
	if tagged, _ := h.rt.InspectImage(t.Context(), "berth/pause:test"); tagged.ID != real {
		t.Errorf("the tag holds %s after a recheck, want berth's image %s back", tagged.ID, real)
	}
	// While the tag holds berth's image, a recheck is one inspect.
	inspects, contents := h.rt.CallCount("InspectImage"), h.rt.CallCount("ImageContent")
	h.ctrl.pause.recheck(t.Context())
	if h.rt.CallCount("InspectImage") != inspects+1 || h.rt.CallCount("ImageContent") != contents {
		t.Errorf("a recheck of the pinned tag made %d inspects and %d content reads, want 1 and 0",
			h.rt.CallCount("InspectImage")-inspects, h.rt.CallCount("ImageContent")-contents)
	}
}

// The recheck runs on the controller's clock.
func TestPauseRecheckLoop(t *testing.T) {
	h := newHarness(t)
	h.put(testPod("first", ctr("a", "app:1")))
	h.settle("default/first")
	real := h.sandboxImage("default/first")
	h.rt.ReplaceImage("berth/pause:test", nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ctrl.pause.recheckLoop(ctx, h.clock)
	}()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		// Other timers share the clock: step until the loop's ticker fired.
		h.clock.Step(pauseRecheckEvery)
		if tagged, _ := h.rt.InspectImage(t.Context(), "berth/pause:test"); tagged.ID == real {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the recheck loop did not put berth's image back under the tag")
		}
		time.Sleep(time.Millisecond)
	}
}

// A configured pod_infra_image is pinned to the ID it had when first
// needed: a later image under its tag is never a sandbox, and it is not
// pulled again.
func TestConfiguredPauseImagePinnedAtPull(t *testing.T) {
	h := newHarness(t)
	cfg := h.ctrl.cfg
	cfg.PauseImage, cfg.PauseBuild = "registry.example/pause:3.9", nil
	h.ctrl = New(cfg, h.st, h.rt, nil)
	h.put(testPod("first", ctr("a", "app:1")))
	h.settle("default/first")
	pinned := h.sandboxImage("default/first")
	h.rt.ReplaceImage("registry.example/pause:3.9", nil)
	h.put(testPod("second", ctr("a", "app:1")))
	h.settle("default/second")
	if got := h.sandboxImage("default/second"); got != pinned {
		t.Errorf("sandbox runs %s, want the image pinned at pull %s", got, pinned)
	}
	if n := h.rt.CallCount("PullImage"); n != 1 {
		t.Errorf("%d pulls, want 1", n)
	}
}

func TestPauseContentMismatch(t *testing.T) {
	b := testPauseBuild()
	good := func() runtime.ImageContent {
		return runtime.ImageContent{ID: "sha256:x",
			Config: runtime.ImageConfig{Entrypoint: []string{pause.Path}, Env: []string{"PATH=/bin"}},
			Layers: []runtime.Layer{{Entries: []runtime.LayerEntry{{Name: "pause", Type: tar.TypeReg, Mode: 0o755, Size: int64(len(b.Exe)), Digest: b.Digest}}}}}
	}
	if err := pauseContentMismatch(good(), b); err != nil {
		t.Fatalf("the built content: %v", err)
	}
	entry := func(c *runtime.ImageContent) *runtime.LayerEntry { return &c.Layers[0].Entries[0] }
	for name, tc := range map[string]struct {
		mutate func(c *runtime.ImageContent)
		want   string
	}{
		"no layer":         {func(c *runtime.ImageContent) { c.Layers = nil }, "0 layers"},
		"another file":     {func(c *runtime.ImageContent) { entry(c).Digest = strings.Repeat("0", 64) }, "want the program's"},
		"another path":     {func(c *runtime.ImageContent) { entry(c).Name = "bin/sh" }, "want the file /pause"},
		"a symlink":        {func(c *runtime.ImageContent) { entry(c).Type = tar.TypeSymlink }, "want the file /pause"},
		"setuid":           {func(c *runtime.ImageContent) { entry(c).Mode = 0o4755 }, "without set-ID bits"},
		"not executable":   {func(c *runtime.ImageContent) { entry(c).Mode = 0o644 }, "want executable"},
		"a second file":    {func(c *runtime.ImageContent) { c.Layers[0].Entries = append(c.Layers[0].Entries, *entry(c)) }, "2 entries"},
		"a second layer":   {func(c *runtime.ImageContent) { c.Layers = append(c.Layers, runtime.Layer{}) }, "2 layers"},
		"other entrypoint": {func(c *runtime.ImageContent) { c.Config.Entrypoint = []string{pause.Path, "x"} }, "it runs"},
		"a command":        {func(c *runtime.ImageContent) { c.Config.Cmd = []string{"x"} }, "it runs"},
		"a user":           {func(c *runtime.ImageContent) { c.Config.User = "1000" }, "user"},
		"a volume":         {func(c *runtime.ImageContent) { c.Config.Volumes = []string{"/v"} }, "volumes"},
		"a health check":   {func(c *runtime.ImageContent) { c.Config.Healthcheck = []string{"CMD", "/pause"} }, "health check"},
		"an environment":   {func(c *runtime.ImageContent) { c.Config.Env = append(c.Config.Env, "LD_PRELOAD=/x") }, "LD_PRELOAD"},
	} {
		c := good()
		tc.mutate(&c)
		if err := pauseContentMismatch(c, b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
}
