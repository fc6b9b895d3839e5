package pauseimage

import (
	"archive/tar"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/pause"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/runtime/fake"
)

const ref = "berth/pause:test"

var discard = slog.New(slog.DiscardHandler)

// testPauseBuild is a pause program for the fake engine.
func testPauseBuild() *pause.Build {
	exe := []byte("pause program")
	return &pause.Build{Exe: exe, Path: pause.Path, Entrypoint: []string{pause.Path}, Digest: pause.Digest(exe)}
}

func newEngine() *fake.Runtime {
	return fake.New(func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) })
}

// Each tick rechecks the tag, one after another: when the tag moved,
// berth's image is put back under it.
func TestRecheckOnEachTick(t *testing.T) {
	rt := newEngine()
	img := New(ref, testPauseBuild(), rt, discard)
	real, err := img.ID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	rt.ReplaceImage(ref, nil)
	tick := make(chan time.Time)
	done := make(chan struct{})
	go func() {
		defer close(done)
		img.rechecks(t.Context(), tick)
	}()
	t.Cleanup(func() { <-done }) // t.Context ends first
	// The second tick is taken only once the first recheck ended.
	tick <- time.Time{}
	tick <- time.Time{}
	if tagged, _ := rt.InspectImage(t.Context(), ref); tagged.ID != real {
		t.Fatalf("the tag holds %s after a recheck, want berth's image %s back", tagged.ID, real)
	}
}

// The pause image is built once per executable: not again by a new berth
// with the same program, again when the tag holds another executable.
func TestPauseImageBuiltOncePerExecutable(t *testing.T) {
	rt := newEngine()
	builds := func() int { return rt.CallCount("BuildImageData") + rt.CallCount("BuildImage") }
	ensure := func(b *pause.Build) {
		// a new berth process
		img := New(ref, b, rt, discard)
		if _, err := img.ID(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	b1 := testPauseBuild()
	ensure(b1)
	if builds() != 1 {
		t.Fatalf("%d builds of an absent pause image, want 1", builds())
	}
	ensure(b1)
	if builds() != 1 {
		t.Errorf("pause image rebuilt for the same program")
	}
	b2 := *b1
	b2.Exe = []byte("another program")
	b2.Digest = pause.Digest(b2.Exe)
	ensure(&b2)
	if builds() != 2 {
		t.Errorf("pause image under the same tag not rebuilt for another program (%d builds)", builds())
	}
	// The fallback, berth's own executable, is built from its file.
	bin := filepath.Join(t.TempDir(), "berth")
	if err := os.WriteFile(bin, []byte("berth"), 0o755); err != nil {
		t.Fatal(err)
	}
	digest, err := runtime.FileDigest(bin)
	if err != nil {
		t.Fatal(err)
	}
	ensure(&pause.Build{Binary: bin, Path: "/berth", Entrypoint: []string{"/berth", "pause"}, Digest: digest})
	if n := rt.CallCount("BuildImage"); n != 1 {
		t.Errorf("%d builds from berth's own executable, want 1", n)
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
