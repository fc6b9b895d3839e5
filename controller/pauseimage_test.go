package controller

import (
	"testing"

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
	h.ctrl.pause.Recheck(t.Context())
	if tagged, _ := h.rt.InspectImage(t.Context(), "berth/pause:test"); tagged.ID != real {
		t.Errorf("the tag holds %s after a recheck, want berth's image %s back", tagged.ID, real)
	}
	// While the tag holds berth's image, a recheck is one inspect.
	inspects, contents := h.rt.CallCount("InspectImage"), h.rt.CallCount("ImageContent")
	h.ctrl.pause.Recheck(t.Context())
	if h.rt.CallCount("InspectImage") != inspects+1 || h.rt.CallCount("ImageContent") != contents {
		t.Errorf("a recheck of the pinned tag made %d inspects and %d content reads, want 1 and 0",
			h.rt.CallCount("InspectImage")-inspects, h.rt.CallCount("ImageContent")-contents)
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
