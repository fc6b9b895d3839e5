package filesource

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/sources"
)

const secretYAML = "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: hunter2}\n"

// A Secret in a file that group or others may read draws a warning naming
// the file, in every update and in berth validate, logged once per change
// of the file; the value never shows.
func TestSecretFileReadableWarns(t *testing.T) {
	var buf testutil.SyncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	dir := t.TempDir()
	f := write(t, dir, "db.yaml", secretYAML)
	if err := os.Chmod(f, 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n")
	want := f + ": holds secret default/db and group or others may read it (mode 0644); chmod go-rwx it"
	s := New("file", dir, 0, sources.Options{Log: log})
	scan := func() sources.Update {
		t.Helper()
		u, _, ok := s.scan(log)
		if !ok {
			t.Fatal("scan failed")
		}
		return u
	}
	for range 2 {
		if u := scan(); !slices.Equal(u.Warnings, []string{want}) {
			t.Errorf("warnings %q, want %q", u.Warnings, want)
		}
	}
	if n := strings.Count(buf.String(), "holds secret"); n != 1 {
		t.Errorf("logged %d times in two scans, want 1:\n%s", n, buf.String())
	}
	write(t, dir, "db.yaml", strings.Replace(secretYAML, "}", ", user: admin}", 1))
	scan()
	if n := strings.Count(buf.String(), "holds secret"); n != 2 {
		t.Errorf("logged %d times after the file changed, want 2", n)
	}
	if strings.Contains(buf.String(), "hunter2") {
		t.Error("the secret's value is in the log")
	}

	_, warns, _, err := sources.ValidateFiles([]string{dir}, manifest.Options{})
	if err != nil || !slices.Contains(warns, want) {
		t.Errorf("validate: %q %v", warns, err)
	}

	if err := os.Chmod(f, 0o600); err != nil {
		t.Fatal(err)
	}
	if u := scan(); len(u.Warnings) != 0 {
		t.Errorf("0600 file: warnings %q", u.Warnings)
	}
	// An invalid Secret is a Secret all the same.
	write(t, dir, "bad.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: bad}\ntype: kubernetes.io/tls\n")
	if err := os.Chmod(filepath.Join(dir, "bad.yaml"), 0o640); err != nil {
		t.Fatal(err)
	}
	if u := scan(); len(u.Warnings) != 1 || !strings.Contains(u.Warnings[0], "bad.yaml: holds secret default/bad") {
		t.Errorf("invalid secret: warnings %q", u.Warnings)
	}
}
