package filesource

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/sources"
)

// The 2014 manifests are named *.manifest: the file source reads them, a
// manifest without an id named after its file, as the seed kubelet named it.
func TestFileSourceReadsManifestFiles(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, "etcd.manifest", "version: v1beta2\ncontainers:\n  - name: etcd\n    image: busybox\n")
	u := <-runSource(t, New("file", dir, 0, sources.Options{}))
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
	s := New("file", dir, 0, sources.Options{Log: log})
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
