package secretfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// followLinks resolves as the kernel does: relative targets from the
// link's directory, ".." after a link from where the link led, a loop an
// error; a missing file has its directory, a missing directory none.
func TestFollowLinks(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "a", "b"), 0o700))
	must(os.WriteFile(filepath.Join(dir, "a", "f"), nil, 0o600))
	must(os.Symlink("a/b", filepath.Join(dir, "tob")))
	must(os.Symlink("../f", filepath.Join(dir, "a", "b", "up")))
	must(os.Symlink("loop", filepath.Join(dir, "loop")))
	for in, want := range map[string]string{
		"tob/up":       filepath.Join(dir, "a", "f"),
		"tob/../f":     filepath.Join(dir, "a", "f"),
		"tob/new":      filepath.Join(dir, "a", "b", "new"),
		"tob/new/x":    filepath.Join(dir, "a", "b", "new", "x"),
		"./a/./b/../f": filepath.Join(dir, "a", "f"),
	} {
		got, d, err := followLinks(dir + "/" + in) // not cleaned
		if err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", in, got, err, want)
		}
		if hasDir := d != nil; hasDir != (in != "tob/new/x") {
			t.Errorf("%s: directory %v", in, d)
		}
	}
	for in, want := range map[string]string{"loop": "symlinks", "a": "is a directory", "a/f/x": "not a directory"} {
		if _, _, err := followLinks(filepath.Join(dir, in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", in, err, want)
		}
	}
}
