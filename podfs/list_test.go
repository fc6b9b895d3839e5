package podfs

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestPodUIDs: only real directories named by a valid UID are pod
// directories; a symlink (even to a directory, even named as a UID), a
// file and a name no pod can have are other entries.
func TestPodUIDs(t *testing.T) {
	r := New(t.TempDir())
	if err := r.Prepare(); err != nil {
		t.Fatal(err)
	}
	pods := filepath.Join(r.Dir(), "pods")
	outside := t.TempDir()
	const uid = "0b6f1a52-2e67-4b3c-9a38-3c0f6d1e9a10"
	for _, d := range []string{uid, "static-pod-1", "Not_A_UID", "..x"} {
		if err := os.Mkdir(filepath.Join(pods, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(pods, "1c6f1a52-2e67-4b3c-9a38-3c0f6d1e9a10")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pods, "file-uid"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	uids, other, err := r.PodUIDs()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{uid, "static-pod-1"}; !slices.Equal(uids, want) {
		t.Errorf("uids %v, want %v", uids, want)
	}
	if want := []string{"..x", "1c6f1a52-2e67-4b3c-9a38-3c0f6d1e9a10", "Not_A_UID", "file-uid"}; !slices.Equal(other, want) {
		t.Errorf("other %v, want %v", other, want)
	}
}
