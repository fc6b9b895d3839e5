package filesource

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/sources"
)

// noUpdate fails when an update arrives within d.
func noUpdate(t *testing.T, updates <-chan sources.Update, d time.Duration, why string) {
	t.Helper()
	select {
	case u := <-updates:
		t.Fatalf("%s: got an update %s", why, describe(u))
	case <-time.After(d):
	}
}

// A file renamed into the directory is complete: it is read at once, with
// no debounce (here an hour long, so waiting for it would time out).
func TestRenameIntoDirectoryIsReadAtOnce(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("completeness of a file is known from inotify only")
	}
	dir, tmp := t.TempDir(), t.TempDir()
	s := New("file", dir, 0, sources.Options{})
	s.Debounce = time.Hour
	updates := startSource(t, s)
	waitFor(t, updates, "first scan", hasPods())
	write(t, tmp, "web.yaml", podManifest("web", "busybox"))
	if err := os.Rename(filepath.Join(tmp, "web.yaml"), filepath.Join(dir, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, updates, "renamed file", hasPods("web"))
}

// A file written in place is not read while it is half written; closing it
// says it is complete.
func TestHalfWrittenFileIsNotRead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("completeness of a file is known from inotify only")
	}
	dir := t.TempDir()
	s := New("file", dir, 0, sources.Options{})
	s.Debounce = time.Hour
	updates := startSource(t, s)
	waitFor(t, updates, "first scan", hasPods())
	m := podManifest("web", "busybox")
	half := strings.Index(m, "  containers:")
	f, err := os.Create(filepath.Join(dir, "web.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(m[:half]); err != nil {
		t.Fatal(err)
	}
	noUpdate(t, updates, 300*time.Millisecond, "a half-written file")
	if _, err := f.WriteString(m[half:]); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	u := waitFor(t, updates, "closed file", hasPods("web"))
	if len(u.Errors) != 0 {
		t.Fatalf("errors %v", u.Errors)
	}
}

// Scans decode only changed files, and never miss an in-place edit that
// keeps the size (file times are coarse).
func TestSameSizeEditIsSeen(t *testing.T) {
	dir := t.TempDir()
	updates := runSource(t, New("file", dir, 0, sources.Options{}))
	waitFor(t, updates, "first scan", hasPods())
	for i := 0; i < 20; i++ {
		img := "busybox:" + string(rune('a'+i%2))
		if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(podManifest("web", img)), 0o644); err != nil {
			t.Fatal(err)
		}
		waitFor(t, updates, "edit "+img, func(u sources.Update) bool {
			return len(u.Pods) == 1 && u.Pods[0].Pod.Spec.Containers[0].Image == img
		})
	}
}

func TestDecodeCacheDecodesOnlyChangedFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", podManifest("a", "busybox"))
	write(t, dir, "b.yaml", podManifest("b", "busybox"))
	time.Sleep(racyWindow + 10*time.Millisecond) // older than the coarse file times
	files, _, _ := sources.ListDir(dir)
	var c decodeCache
	u1 := c.decodeFiles("file", files, manifest.Options{}, nil)
	write(t, dir, "b.yaml", podManifest("b", "busybox:2"))
	u2 := c.decodeFiles("file", files, manifest.Options{}, nil)
	if len(u1.Pods) != 2 || len(u2.Pods) != 2 {
		t.Fatalf("pods %d, %d", len(u1.Pods), len(u2.Pods))
	}
	if u2.Pods[0].Pod != u1.Pods[0].Pod {
		t.Error("unchanged a.yaml decoded again")
	}
	// A file changed within racyWindow is decoded again, whatever its times.
	u3 := c.decodeFiles("file", files, manifest.Options{}, nil)
	if u3.Pods[1].Pod == u2.Pods[1].Pod {
		t.Error("b.yaml, changed just now, taken from the cache")
	}
	if u2.Pods[1].Pod == u1.Pods[1].Pod || u2.Pods[1].Pod.Spec.Containers[0].Image != "busybox:2" {
		t.Error("changed b.yaml not decoded again")
	}
}

// A removed file's pods stop after the debounce, counted from the unlink,
// with no further hold: tools unlink a file and create it again (install,
// cp --remove-destination, git checkout), which must restart nothing, even
// when another file's change makes berth scan in between.
func TestRemovedFileStopsAfterTheDebounce(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("an unlink is known from inotify only")
	}
	dir, clk, updates := webOnFakeClock(t)
	write(t, dir, "db.yaml", podManifest("db", "busybox:1"))
	waitFor(t, updates, "db.yaml", hasPods("db", "web"))
	next := func(what string) sources.Update {
		t.Helper()
		select {
		case u := <-updates:
			return u
		case <-time.After(5 * time.Second):
			t.Fatalf("no update: %s", what)
		}
		return sources.Update{}
	}

	// Unlinked, a scan (another file written), created again: every
	// update has the pod.
	if err := os.Remove(filepath.Join(dir, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	atomicWrite(t, dir, "db.yaml", podManifest("db", "busybox:2"))
	if u := next("the scan db.yaml starts"); !hasPods("db", "web")(u) {
		t.Fatalf("a scan right after an unlink dropped the pod: %s", describe(u))
	}
	write(t, dir, "web.yaml", podManifest("web", "busybox:2"))
	if u := next("the file created again"); !hasPods("db", "web")(u) || podImage(u, "web") != "busybox:2" {
		t.Fatalf("after an unlink and a create: %s", describe(u))
	}
	testutil.WaitFor(t, 5*time.Second, "the debounce timer", clk.HasWaiters)
	clk.Step(time.Second)
	if u := next("the debounced scan"); !hasPods("db", "web")(u) {
		t.Fatalf("the debounced scan after an unlink and a create: %s", describe(u))
	}

	// Unlinked for good: gone at the debounced scan, not one hold later.
	if err := os.Remove(filepath.Join(dir, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, "the debounce timer", clk.HasWaiters)
	noUpdate(t, updates, 100*time.Millisecond, "before the debounce passed")
	clk.Step(time.Second)
	if u := next("the scan after the removal"); !hasPods("db")(u) {
		t.Fatalf("the debounced scan after the removal: %s", describe(u))
	}
}

// vim's save moves the old file away, then writes the new one: no scan in
// between may drop the pod.
func TestEditorSaveNeverDropsThePod(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "web.yaml", podManifest("web", "busybox:1"))
	s := New("file", dir, 0, sources.Options{})
	s.Debounce = DefaultDebounce
	updates := startSource(t, s)
	waitFor(t, updates, "first scan", hasPods("web"))
	if err := os.Rename(filepath.Join(dir, "web.yaml"), filepath.Join(dir, "web.yaml~")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "web.yaml", podManifest("web", "busybox:2"))
	_ = os.Remove(filepath.Join(dir, "web.yaml~"))
	deadline := time.After(3 * DefaultDebounce)
	seen := false
	for {
		select {
		case u := <-updates:
			if !hasPods("web")(u) {
				t.Fatalf("an update without the pod during a save: %s", describe(u))
			}
			seen = seen || u.Pods[0].Pod.Spec.Containers[0].Image == "busybox:2"
		case <-deadline:
			if !seen {
				t.Fatal("the saved edit was never read")
			}
			return
		}
	}
}

// A directory replaced by a rename (mv pods.new pods) is watched anew.
func TestReplacedDirectoryIsWatched(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "pods")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	updates := runSource(t, New("file", dir, 0, sources.Options{}))
	waitFor(t, updates, "first scan", hasPods())
	next := filepath.Join(parent, "pods.new")
	if err := os.Mkdir(next, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, next, "a.yaml", podManifest("a", "busybox"))
	if err := os.Rename(dir, filepath.Join(parent, "pods.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, dir); err != nil {
		t.Fatal(err)
	}
	waitFor(t, updates, "the new directory's pod", hasPods("a"))
	write(t, dir, "b.yaml", podManifest("b", "busybox"))
	waitFor(t, updates, "a file added to the new directory", hasPods("a", "b"))
}
