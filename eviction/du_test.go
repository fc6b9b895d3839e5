package eviction

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// writeBytes writes n non-zero bytes to path (allocated, not sparse).
func writeBytes(t *testing.T, path string, n int) {
	t.Helper()
	if err := os.WriteFile(path, bytes.Repeat([]byte{'x'}, n), 0o644); err != nil {
		t.Fatal(err)
	}
}

func blocks(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Blocks) * 512
}

// diskUsage counts allocated blocks as du: every directory and file once,
// symlinks not followed, hard links once; it stops early above the limit.
func TestDiskUsage(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "vol")
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(filepath.Join(dir, "d/e"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeBytes(t, outside, 4<<20)
	writeBytes(t, filepath.Join(dir, "f"), 1<<20)
	writeBytes(t, filepath.Join(dir, "d/e/g"), 256<<10)
	if err := os.Link(filepath.Join(dir, "f"), filepath.Join(dir, "d/hard")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(base, filepath.Join(dir, "d/up")); err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, p := range []string{".", "f", "d", "d/e", "d/e/g", "link", "d/up"} {
		want += blocks(t, filepath.Join(dir, p))
	}
	if want < (1<<20)+(256<<10) {
		t.Fatalf("the filesystem allocates %d bytes for 1.25 MiB of data; cannot test", want)
	}
	u, err := diskUsage(t.Context(), dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if u.bytes != want || u.truncated {
		t.Fatalf("usage %+v, want %d bytes, complete", u, want)
	}
	u, err = diskUsage(t.Context(), dir, 1<<10)
	if err != nil || u.bytes <= 1<<10 || u.bytes >= want {
		t.Fatalf("usage with a 1 KiB stop: %+v %v, want over 1 KiB and below the whole %d", u, err, want)
	}
	if _, err := diskUsage(t.Context(), filepath.Join(base, "missing"), 0); !os.IsNotExist(err) {
		t.Fatalf("missing dir: %v", err)
	}
}

// The walk is bounded in depth: below duMaxDepth it stops and says so.
func TestDiskUsageDepthBound(t *testing.T) {
	dir := t.TempDir()
	p := dir
	for range duMaxDepth + 2 {
		p = filepath.Join(p, "d")
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Skipf("cannot nest %d directories here: %v", duMaxDepth+2, err)
		}
	}
	u, err := diskUsage(t.Context(), dir, 0)
	if err != nil || !u.truncated {
		t.Fatalf("usage %+v %v, want truncated", u, err)
	}
}
