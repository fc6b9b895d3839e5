package filesource

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/internal/testutil"

	"github.com/berth-dev/berth/sources"
)

// The file source logs a pod's warning line once per spec.
func TestWarningLoggedOncePerSpec(t *testing.T) {
	var buf testutil.SyncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	dir := t.TempDir()
	pod := podManifest("web", "berth/testapp:1") + "  tolerations: [{key: k}]\n"
	write(t, dir, "web.yaml", pod)
	write(t, dir, "plain.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: plain}\nspec: {containers: [{name: a, image: i}]}\n")
	s := New("file", dir, 0, sources.Options{Log: log})
	scan := func() {
		s.cache = nil // decode again, as a changed file would be
		if _, _, ok := s.scan(log); !ok {
			t.Fatal("scan failed")
		}
	}
	count := func() int { return strings.Count(buf.String(), "ignored without a cluster") }
	scan()
	scan()
	if n := count(); n != 1 {
		t.Fatalf("%d warning lines after two scans, want 1:\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), filepath.Join(dir, "web.yaml")+": default/web: ignored without a cluster: spec.tolerations (no taints)") {
		t.Errorf("log %q", buf.String())
	}
	write(t, dir, "web.yaml", pod+"  schedulerName: other\n")
	scan()
	scan()
	if n := count(); n != 2 {
		t.Fatalf("%d warning lines after the spec changed, want 2:\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), "ignored without a cluster: spec.schedulerName (no scheduler), spec.tolerations (no taints)") {
		t.Errorf("log %q", buf.String())
	}
}
