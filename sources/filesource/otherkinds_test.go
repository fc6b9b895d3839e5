package filesource

import (
	"slices"
	"testing"
	"time"

	"github.com/berth-dev/berth/sources"
)

// The file source runs the Pod of a file that also declares a Service, and
// reports the Service as a warning, not a manifest error (which would fail
// the whole origin and keep pods removed from it running), as every source
// does (sources' TestOtherKindsAreWarnings).
func TestFileSourceOtherKindsAreWarnings(t *testing.T) {
	dir := t.TempDir()
	file := write(t, dir, "app.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n---\n"+podManifest("web", "nginx"))
	fileSrc := runSource(t, New("file", dir, time.Hour, sources.Options{}))
	u := waitFor(t, fileSrc, "the pod", hasPods("web"))
	if want := file + ": kind Service is not served by berth; skipped (document 1)"; len(u.Errors) != 0 || !slices.Contains(u.Warnings, want) {
		t.Errorf("file source: errors %v, warnings %q", u.Errors, u.Warnings)
	}
}
