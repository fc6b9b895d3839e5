package podfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestTerminationLogThroughSymlinks: the termination log's path, whose
// tail does not exist yet, is refused when an existing directory on it
// leads out of root_dir, and accepted when one leads elsewhere inside.
func TestTerminationLogThroughSymlinks(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	ctrs := filepath.Join(root, "pods", uid, "containers")
	if err := os.MkdirAll(ctrs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ctrs, "app")); err != nil {
		t.Fatal(err)
	}
	r := New(root)
	if p, err := r.TerminationLog(uid, "app", 3); !errors.Is(err, ErrUnsafe) {
		t.Errorf("through a symlink out: %q, %v", p, err)
	}
	if p, err := r.MakeTerminationLog(uid, "app", 3); !errors.Is(err, ErrUnsafe) {
		t.Errorf("made through a symlink out: %q, %v", p, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("%d entries written outside root_dir", len(entries))
	}

	inside := filepath.Join(root, "elsewhere")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(inside, filepath.Join(ctrs, "side")); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(r.Dir(), "pods", uid, "containers", "side", "3", "termination-log")
	if p, err := r.TerminationLog(uid, "side", 3); err != nil || p != want {
		t.Errorf("through a symlink inside: %q, %v; want %q", p, err, want)
	}
}
