package sources

import (
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/manifest"
)

// The 2014 manifests are named *.manifest: the file source reads them, a
// manifest without an id named after its file, as the seed kubelet named it.
func TestFileSourceReadsManifestFiles(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, "etcd.manifest", "version: v1beta2\ncontainers:\n  - name: etcd\n    image: busybox\n")
	u := <-runSource(t, NewFileSource("file", dir, 0, Options{}))
	if len(u.Errors) != 0 || len(u.Pods) != 1 {
		t.Fatalf("update %s", describe(u))
	}
	if got := u.Pods[0].Pod.Name; got != manifest.LegacyPodName(f) || !strings.HasPrefix(got, "etcdmanifest") {
		t.Errorf("name %q", got)
	}
}

// Each skipped entry but a hidden one is logged once, with its reason, and
// again only after it was gone.
func TestFileSourceLogsSkippedOnce(t *testing.T) {
	var buf testutil.SyncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	dir := t.TempDir()
	write(t, dir, "pod.yaml", podManifest("p", "busybox"))
	write(t, dir, "pod.yaml~", podManifest("p", "busybox"))
	write(t, dir, ".hidden", "x")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling.yaml")); err != nil {
		t.Fatal(err)
	}
	s := NewFileSource("file", dir, 0, Options{Log: log})
	for range 2 {
		if _, _, ok := s.scan(log); !ok {
			t.Fatal("scan failed")
		}
	}
	text := buf.String()
	for _, want := range []string{
		"path=" + filepath.Join(dir, "pod.yaml~") + ` reason="an editor swap or backup file"`,
		"path=" + filepath.Join(dir, "sub") + ` reason="a directory (the source does not recurse)"`,
		"path=" + filepath.Join(dir, "dangling.yaml") + ` reason="a dangling symlink"`,
	} {
		if n := strings.Count(text, want); n != 1 {
			t.Errorf("%q logged %d times:\n%s", want, n, text)
		}
	}
	if strings.Contains(text, ".hidden") {
		t.Errorf("hidden file logged:\n%s", text)
	}
	if err := os.Remove(filepath.Join(dir, "pod.yaml~")); err != nil {
		t.Fatal(err)
	}
	s.scan(log)
	write(t, dir, "pod.yaml~", "x")
	s.scan(log)
	if n := strings.Count(buf.String(), "pod.yaml~"); n != 2 {
		t.Errorf("re-created backup logged %d times in all, want 2", n)
	}
}

func TestListDir(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.manifest", "b", "c.yaml", ".d.yaml", "e.yaml.swp"} {
		write(t, dir, name, "x")
	}
	files, skipped, err := listDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "a.manifest"), filepath.Join(dir, "b"), filepath.Join(dir, "c.yaml")}; !reflect.DeepEqual(files, want) {
		t.Errorf("files %q", files)
	}
	want := []skippedEntry{{filepath.Join(dir, ".d.yaml"), "hidden"}, {filepath.Join(dir, "e.yaml.swp"), "an editor swap or backup file"}}
	if !reflect.DeepEqual(skipped, want) {
		t.Errorf("skipped %v", skipped)
	}
}

// berth validate DIR names what it skipped, and says when a directory has
// nothing to read.
func TestValidateFilesReportsSkipped(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".hidden.yaml", podYAML)
	write(t, dir, "web.yaml.bak", podYAML)
	n, warns, errs, err := ValidateFiles([]string{dir}, manifest.Options{})
	if err != nil || n != 0 || len(errs) != 0 {
		t.Fatalf("n %d errs %v err %v", n, errs, err)
	}
	want := []string{
		filepath.Join(dir, ".hidden.yaml") + ": skipped: hidden",
		filepath.Join(dir, "web.yaml.bak") + ": skipped: an editor swap or backup file",
		dir + ": no file to read (2 entries skipped)",
	}
	if !reflect.DeepEqual(warns, want) {
		t.Errorf("warnings\n%q\nwant\n%q", warns, want)
	}
}
