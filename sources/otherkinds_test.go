package sources

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/berth-dev/berth/manifest"
)

// appWithService is an application file as users have them: a Pod and the
// Service in front of it.
var appWithService = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n---\n" + podManifest("web", "nginx")

// skippedService is the warning of appWithService's Service read from origin.
func skippedService(origin string) string {
	return origin + ": kind Service is not served by berth; skipped (document 1)"
}

// Every source runs the Pod of a file that also declares a Service, and
// reports the Service as a warning, not a manifest error (which would fail
// the whole origin and keep pods removed from it running); the file
// source's part is filesource's TestFileSourceOtherKindsAreWarnings.
func TestOtherKindsAreWarnings(t *testing.T) {
	dir := t.TempDir()
	file := write(t, dir, "app.yaml", appWithService)
	n, warns, errs, err := ValidateFiles([]string{dir}, manifest.Options{})
	if err != nil || n != 1 || len(errs) != 0 || !slices.Contains(warns, skippedService(file)) {
		t.Errorf("validate: %d pods, warnings %q, errors %v, err %v; want 1 pod and the Service's warning", n, warns, errs, err)
	}

	srv := newManifestServer(t, appWithService)
	u := await(t, startSource(t, newTestHTTPSource(srv.URL, nil, Options{})), 5*time.Second, "web", exactly("web"))
	if len(u.Errors) != 0 || !slices.Contains(u.Warnings, skippedService(srv.URL)) {
		t.Errorf("http source: errors %v, warnings %q", u.Errors, u.Warnings)
	}
	srv.set(podManifest("web", "nginx"), http.StatusOK)

	e := startEtcd(t)
	mustPut(t, e.Client(), testPrefix+"default/web", appWithService)
	u = await(t, startSource(t, newTestEtcdSource(e.ClientURL)), 10*time.Second, "web", exactly("web"))
	if len(u.Errors) != 0 || !slices.Contains(u.Warnings, skippedService(testPrefix+"default/web")) {
		t.Errorf("etcd source: errors %v, warnings %q", u.Errors, u.Warnings)
	}
}
