package filesource

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/sources"
)

func podManifest(name, image string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  containers:\n  - name: c\n    image: %s\n", name, image)
}

// runSource runs s with a short debounce until the test ends and returns
// its updates.
func runSource(t *testing.T, s *Source) <-chan sources.Update {
	t.Helper()
	s.Debounce = 10 * time.Millisecond
	return startSource(t, s)
}

// waitFor returns the first update that satisfies ok, failing after 5 s.
func waitFor(t *testing.T, updates <-chan sources.Update, what string, ok func(sources.Update) bool) sources.Update {
	t.Helper()
	deadline := time.After(5 * time.Second)
	var last sources.Update
	for {
		select {
		case u := <-updates:
			if ok(u) {
				return u
			}
			last = u
		case <-deadline:
			t.Fatalf("timed out waiting for %s; last update %s", what, describe(last))
		}
	}
}

func podNames(u sources.Update) []string {
	var names []string
	for _, d := range u.Pods {
		names = append(names, d.Pod.Name)
	}
	slices.Sort(names)
	return names
}

func describe(u sources.Update) string {
	return fmt.Sprintf("pods %v errors %v", podNames(u), u.Errors)
}

func hasPods(names ...string) func(sources.Update) bool {
	return func(u sources.Update) bool {
		got := podNames(u)
		return slices.Equal(got, names) || (len(got) == 0 && len(names) == 0)
	}
}

func TestFileSourceIgnoreRules(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".hidden.yaml", "a.yaml~", "a.yaml.swp", "b.yaml.bak", "c.yaml.tmp", "#d.yaml#"} {
		write(t, dir, name, podManifest("ignored-"+strings.NewReplacer(".", "", "~", "").Replace(strings.ToLower(name)), "busybox"))
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "sub"), "nested.yaml", podManifest("nested", "busybox"))
	write(t, dir, "one.yaml", podManifest("one", "busybox"))
	write(t, dir, "two.yml", podManifest("two", "busybox"))
	write(t, dir, "three.JSON", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"three"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`)
	write(t, dir, "four.manifest", "version: v1beta1\nid: four\ncontainers: [{name: c, image: busybox}]\n")
	write(t, dir, "five", podManifest("five", "busybox"))
	if err := os.Symlink(filepath.Join(dir, "sub", "nested.yaml"), filepath.Join(dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nowhere.yaml"), filepath.Join(dir, "dangling.yaml")); err != nil {
		t.Fatal(err)
	}

	u := <-runSource(t, New("file", dir, time.Hour, sources.Options{}))
	if u.Source != "file" || len(u.Errors) != 0 {
		t.Errorf("update %s", describe(u))
	}
	if got, want := podNames(u), []string{"five", "four", "nested", "one", "three", "two"}; !reflect.DeepEqual(got, want) {
		t.Errorf("pods %v, want %v", got, want)
	}
	for _, d := range u.Pods {
		if d.Pod.Name == "one" && d.Origin != filepath.Join(dir, "one.yaml") {
			t.Errorf("origin %q", d.Origin)
		}
	}
}

func TestFileSourceSizeLimit(t *testing.T) {
	dir := t.TempDir()
	big := podManifest("big", "busybox") + "# " + strings.Repeat("x", sources.MaxManifestBytes) + "\n"
	write(t, dir, "big.yaml", big)
	write(t, dir, "small.yaml", podManifest("small", "busybox"))
	u := <-runSource(t, New("file", dir, time.Hour, sources.Options{}))
	if !hasPods("small")(u) {
		t.Errorf("pods %v", podNames(u))
	}
	want := []manifest.ManifestError{{Origin: filepath.Join(dir, "big.yaml"), Err: "file is larger than 10 MiB"}}
	if !reflect.DeepEqual(u.Errors, want) {
		t.Errorf("errors %v", u.Errors)
	}
}

func TestFileSourceAddModifyDelete(t *testing.T) {
	dir := t.TempDir()
	updates := runSource(t, New("file", dir, time.Hour, sources.Options{}))
	waitFor(t, updates, "empty first scan", hasPods())

	p := write(t, dir, "web.yaml", podManifest("web", "busybox:1"))
	waitFor(t, updates, "added pod", hasPods("web"))

	write(t, dir, "web.yaml", podManifest("web", "busybox:2"))
	u := waitFor(t, updates, "modified pod", func(u sources.Update) bool {
		return hasPods("web")(u) && u.Pods[0].Pod.Spec.Containers[0].Image == "busybox:2"
	})
	if len(u.Errors) != 0 {
		t.Errorf("errors %v", u.Errors)
	}

	tmp := write(t, dir, ".web.yaml.tmp", podManifest("web", "busybox:3"))
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	waitFor(t, updates, "atomically replaced pod", func(u sources.Update) bool {
		return hasPods("web")(u) && u.Pods[0].Pod.Spec.Containers[0].Image == "busybox:3"
	})

	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	waitFor(t, updates, "deleted pod", hasPods())
}

func TestFileSourceRescan(t *testing.T) {
	dir := t.TempDir()
	s := New("file", dir, 20*time.Millisecond, sources.Options{})
	updates := runSource(t, s)
	waitFor(t, updates, "first scan", hasPods())
	waitFor(t, updates, "periodic rescan", hasPods())
}

// TestFileSourceConfigMapSwap follows the Kubernetes atomic writer: files are
// symlinks through "..data", which is swapped by renaming a new symlink.
func TestFileSourceConfigMapSwap(t *testing.T) {
	dir := t.TempDir()
	mkVersion := func(version, image string) {
		vdir := filepath.Join(dir, version)
		if err := os.Mkdir(vdir, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, vdir, "pod.yaml", podManifest("cm", image))
	}
	mkVersion("..2024_01_01_00_00_00.1", "busybox:1")
	if err := os.Symlink("..2024_01_01_00_00_00.1", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..data/pod.yaml", filepath.Join(dir, "pod.yaml")); err != nil {
		t.Fatal(err)
	}
	updates := runSource(t, New("file", dir, time.Hour, sources.Options{}))
	image := func(want string) func(sources.Update) bool {
		return func(u sources.Update) bool {
			return hasPods("cm")(u) && u.Pods[0].Pod.Spec.Containers[0].Image == want
		}
	}
	waitFor(t, updates, "first version", image("busybox:1"))

	mkVersion("..2024_01_01_00_00_01.2", "busybox:2")
	if err := os.Symlink("..2024_01_01_00_00_01.2", filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "..2024_01_01_00_00_00.1")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, updates, "swapped version", image("busybox:2"))
}

func TestFileSourceInvalidFileKeepsOthers(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "good.yaml", podManifest("good", "busybox"))
	bad := write(t, dir, "bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: [oops\n")
	invalid := write(t, dir, "invalid.yaml", podManifest("invalid", ""))
	u := <-runSource(t, New("file", dir, time.Hour, sources.Options{}))
	if !hasPods("good")(u) {
		t.Errorf("pods %v", podNames(u))
	}
	if len(u.Errors) != 2 {
		t.Fatalf("errors %v", u.Errors)
	}
	if e := u.Errors[0]; e.Origin != bad || e.PodKey != "" {
		t.Errorf("parse error %+v", e)
	}
	if e := u.Errors[1]; e.Origin != invalid || e.PodKey != "default/invalid" || e.Field != "spec.containers[0].image" {
		t.Errorf("validation error %+v", e)
	}
}

func TestFileSourceDuplicateAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", podManifest("web", "busybox:a"))
	b := write(t, dir, "b.yaml", podManifest("web", "busybox:b"))
	u := <-runSource(t, New("file", dir, time.Hour, sources.Options{}))
	if !hasPods("web")(u) || u.Pods[0].Pod.Spec.Containers[0].Image != "busybox:a" {
		t.Errorf("pods %s", describe(u))
	}
	if len(u.Errors) != 1 || u.Errors[0].Origin != b || u.Errors[0].PodKey != "default/web" {
		t.Errorf("errors %v", u.Errors)
	}
}

func TestFileSourceMissingPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pods")
	updates := runSource(t, New("file", dir, 30*time.Millisecond, sources.Options{}))
	u := <-updates
	want := []string{dir + " does not exist; its pods start when it is created"}
	if len(u.Pods) != 0 || len(u.Errors) != 0 || !reflect.DeepEqual(u.Warnings, want) {
		t.Errorf("update %s", describe(u))
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	waitFor(t, updates, "created directory", func(u sources.Update) bool { return len(u.Warnings) == 0 })
	write(t, dir, "late.yaml", podManifest("late", "busybox"))
	waitFor(t, updates, "pod in created directory", hasPods("late"))
}

// A path created after the start, parent directories included, is read as
// soon as it exists, with no rescan: the source watches the nearest
// existing ancestor. Missing names the path until then.
func TestFileSourceWatchesForAMissingPath(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "etc", "berth", "pods")
	var logs testutil.SyncBuffer
	s := New("file", dir, -1, sources.Options{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	updates := runSource(t, s)
	u := <-updates
	if len(u.Pods) != 0 || len(u.Warnings) != 1 || !strings.Contains(u.Warnings[0], dir+" does not exist") {
		t.Fatalf("first update %s", describe(u))
	}
	if err := s.Missing(); err == nil || err.Error() != dir+" does not exist" {
		t.Fatalf("Missing() = %v", err)
	}
	staged := filepath.Join(top, "staged")
	if err := os.MkdirAll(staged, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, staged, "web.yaml", podManifest("web", "busybox"))
	if err := os.MkdirAll(filepath.Join(top, "etc", "berth"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(staged, dir); err != nil {
		t.Fatal(err)
	}
	waitFor(t, updates, "pod of the created directory", hasPods("web"))
	if err := s.Missing(); err != nil {
		t.Fatalf("Missing() = %v once the directory exists", err)
	}
	if !strings.Contains(logs.String(), "manifest path created") {
		t.Errorf("no log line for the created path:\n%s", logs.String())
	}
}

func TestFileSourceSingleFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "other.yaml", podManifest("other", "busybox"))
	p := write(t, dir, "pod.conf", podManifest("single", "busybox:1"))
	updates := runSource(t, New("file", p, time.Hour, sources.Options{}))
	u := waitFor(t, updates, "single file", hasPods("single"))
	if u.Pods[0].Origin != p {
		t.Errorf("origin %q", u.Pods[0].Origin)
	}
	write(t, dir, "pod.conf", podManifest("single", "busybox:2"))
	waitFor(t, updates, "modified single file", func(u sources.Update) bool {
		return hasPods("single")(u) && u.Pods[0].Pod.Spec.Containers[0].Image == "busybox:2"
	})
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	waitFor(t, updates, "removed single file", func(u sources.Update) bool {
		// A deleted single file means no pods, as in a directory.
		return len(u.Pods) == 0 && len(u.Errors) == 0 && len(u.Warnings) == 1
	})
}

func TestFileSourceStopsWhileSending(t *testing.T) {
	s := New("file", t.TempDir(), time.Hour, sources.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, make(chan sources.Update)) }()
	waitBlockedIn(t, "(*Source).scanAndSend")
	cancel()
	runReturned(t, done, "Run blocked on send after cancel")
}
