package podfs

import (
	"os"
	"path/filepath"
	"testing"
)

// A Localhost seccomp profile is read from root_dir/seccomp only: a name
// climbing out, an absolute name or a symlink out reads nothing.
func TestSeccompProfileIsConfined(t *testing.T) {
	dir := t.TempDir()
	root := New(filepath.Join(dir, "root"))
	if err := os.MkdirAll(filepath.Join(root.Dir(), "seccomp"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret.json")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root.Dir(), "seccomp", "ok.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(root.Dir(), "seccomp", "link.json")); err != nil {
		t.Fatal(err)
	}
	if b, err := root.SeccompProfile("ok.json"); err != nil || string(b) != "{}" {
		t.Fatalf("ok.json: %q, %v", b, err)
	}
	for _, name := range []string{"../../secret.json", secret, "link.json"} {
		if b, err := root.SeccompProfile(name); err == nil {
			t.Errorf("%s: read %q from outside the seccomp root", name, b)
		}
	}
}
