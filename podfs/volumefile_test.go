package podfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// ReadVolumeFile reads inside the volume only: not through a symlink or
// "..", not a FIFO (without blocking), not beyond MaxVolumeFile.
func TestReadVolumeFile(t *testing.T) {
	r := New(t.TempDir())
	const uid = "0123abcd-0000-0000-0000-000000000000"
	dir, err := r.MakeVolumeDir(uid, "config", func(*os.File) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "host-secret")
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sub/config.env", "A='1'\n")
	write("big.env", strings.Repeat("x", MaxVolumeFile+1))
	if err := os.WriteFile(secret, []byte("S='host'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"abs.env": secret, "up.env": "../../../../../../" + secret, "inside.env": "sub/config.env"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.env"), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, rel := range []string{"sub/config.env", "inside.env"} {
		if got, err := r.ReadVolumeFile(uid, "config", rel); err != nil || string(got) != "A='1'\n" {
			t.Errorf("%s: %q %v", rel, got, err)
		}
	}
	if _, err := r.ReadVolumeFile(uid, "config", "missing.env"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	for _, rel := range []string{"abs.env", "up.env", "../config/sub/config.env", "fifo.env", "big.env", "sub"} {
		if got, err := r.ReadVolumeFile(uid, "config", rel); err == nil {
			t.Errorf("%s: read %q, want an error", rel, got)
		}
	}
}
