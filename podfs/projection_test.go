//go:build linux

package podfs

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// readVolume reads every file through the volume's top-level names.
func readVolume(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name()[0] == '.' {
			continue
		}
		top := filepath.Join(dir, e.Name())
		err := filepath.Walk(top+"/.", func(p string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(b)
			return err
		})
		if err != nil {
			if b, rerr := os.ReadFile(top); rerr == nil {
				out[e.Name()] = string(b)
				continue
			}
			t.Fatal(err)
		}
	}
	return out
}

// TestWriteProjectionLayout: the kubelet's layout, a rewrite only when the
// payload changed, removed keys gone, the old timestamped dir deleted.
func TestWriteProjectionLayout(t *testing.T) {
	r := New(t.TempDir())
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	p := Projection{UID: uid, Volume: "cfg", Now: now, Files: map[string]File{
		"a":     {Data: []byte("1")},
		"d/b":   {Data: []byte("2"), Mode: 0o600},
		"d/e/c": {Data: []byte("3")},
	}}
	wrote, err := r.WriteProjection(p)
	if err != nil || !wrote {
		t.Fatalf("first write: %v %v", wrote, err)
	}
	dir, _ := r.ProjectedDir(uid, "cfg")
	data, err := os.Readlink(filepath.Join(dir, "..data"))
	if err != nil || data[:2] != ".." {
		t.Fatalf("..data -> %q, %v", data, err)
	}
	if l, _ := os.Readlink(filepath.Join(dir, "a")); l != "..data/a" {
		t.Fatalf("a -> %q", l)
	}
	if fi, err := os.Stat(filepath.Join(dir, "d", "b")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("d/b: %v %v", fi, err)
	}
	if got := readVolume(t, dir); len(got) != 3 || got["d/e/c"] != "3" {
		t.Fatalf("files %v", got)
	}
	wrote, err = r.WriteProjection(p)
	if err != nil || wrote {
		t.Fatalf("unchanged payload rewritten: %v %v", wrote, err)
	}
	p.Files = map[string]File{"a": {Data: []byte("one")}}
	if wrote, err = r.WriteProjection(p); err != nil || !wrote {
		t.Fatalf("update: %v %v", wrote, err)
	}
	if got := readVolume(t, dir); len(got) != 1 || got["a"] != "one" {
		t.Fatalf("after update %v", got)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 3 { // ..<ts>, ..data, a
		t.Fatalf("entries after update: %v", names)
	}
	if _, err := os.Lstat(filepath.Join(dir, data)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("old timestamped dir %s left: %v", data, err)
	}
}

// TestWriteProjectionIsAtomic: a reader going through ..data sees either
// the whole old set or the whole new one, never a mix.
func TestWriteProjectionIsAtomic(t *testing.T) {
	r := New(t.TempDir())
	files := func(v string) map[string]File {
		return map[string]File{"x": {Data: []byte(v)}, "y": {Data: []byte(v)}}
	}
	p := Projection{UID: uid, Volume: "cfg", Now: time.Now(), Files: files("0")}
	if _, err := r.WriteProjection(p); err != nil {
		t.Fatal(err)
	}
	dir, _ := r.ProjectedDir(uid, "cfg")
	var stop atomic.Bool
	var mixed atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			// One resolution of ..data, as a reader holding its directory.
			d, err := os.Open(filepath.Join(dir, "..data"))
			if err != nil {
				continue
			}
			x, ex := readAt(d, "x")
			y, ey := readAt(d, "y")
			d.Close()
			if ex == nil && ey == nil && x != y {
				mixed.Add(1)
			}
		}
	}()
	for i := 1; i <= 200; i++ {
		p.Files = files(string(rune('a' + i%26)))
		if _, err := r.WriteProjection(p); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if n := mixed.Load(); n > 0 {
		t.Fatalf("%d reads saw a mixed set", n)
	}
}

func readAt(d *os.File, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join("/proc/self/fd", strconv.Itoa(int(d.Fd())), name))
	return string(b), err
}

// TestWriteProjectionRefusesEscapes: payload paths that could leave the
// volume, or a ..data planted to point elsewhere, are refused.
func TestWriteProjectionRefusesEscapes(t *testing.T) {
	r := New(t.TempDir())
	for _, bad := range []string{"../x", "/etc/passwd", "a/../../x", "..data", "a/..b", "./a", ""} {
		_, err := r.WriteProjection(Projection{UID: uid, Volume: "cfg", Files: map[string]File{bad: {}}})
		if !errors.Is(err, ErrUnsafe) {
			t.Errorf("path %q: err %v, want ErrUnsafe", bad, err)
		}
	}
	dir, _ := r.ProjectedDir(uid, "cfg")
	outside := t.TempDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.WriteProjection(Projection{UID: uid, Volume: "cfg", Files: map[string]File{"a": {}}}); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("planted ..data: %v", err)
	}
}

// TestSecretProjectionOnTmpfs: a Tmpfs projection is a tmpfs mount, and
// RemovePod unmounts it before removing the pod's directory.
func TestSecretProjectionOnTmpfs(t *testing.T) {
	needRoot(t)
	r := New(t.TempDir())
	p := Projection{UID: uid, Volume: "sec", Tmpfs: true, SizeBytes: 1 << 20, Now: time.Now(),
		Files: map[string]File{"password": {Data: []byte("s3cret"), Mode: 0o400}}}
	if _, err := r.WriteProjection(p); err != nil {
		t.Fatal(err)
	}
	dir, _ := r.ProjectedDir(uid, "sec")
	if m, err := isMounted(dir); err != nil || !m {
		t.Fatalf("secret volume not a mount: %v %v", m, err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		t.Fatalf("secret volume not on tmpfs: %x %v", st.Type, err)
	}
	if _, err := r.WriteProjection(p); err != nil { // mounted once
		t.Fatal(err)
	}
	if mps, _ := mountPoints(dir); len(mps) != 1 {
		t.Fatalf("mounts at the volume: %v", mps)
	}
	if err := r.RemovePod(uid); err != nil {
		t.Fatal(err)
	}
	pd, _ := r.PodDir(uid)
	if _, err := os.Stat(pd); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("pod dir left: %v", err)
	}
}

// TestSubPathOfProjectionDoesNotCreate: a subPath of a projected volume is
// bound from its current data dir and a missing one is refused, not made.
func TestSubPathOfProjectionDoesNotCreate(t *testing.T) {
	needRoot(t)
	r := New(t.TempDir())
	p := Projection{UID: uid, Volume: "cfg", Now: time.Now(), Files: map[string]File{"conf": {Data: []byte("v1")}}}
	if _, err := r.WriteProjection(p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.RemovePod(uid) })
	data, err := r.ProjectionDataDir(uid, "cfg")
	if err != nil {
		t.Fatal(err)
	}
	src, err := r.BindSubPath(SubPath{UID: uid, Volume: "cfg", Container: "c", VolumePath: data, Path: "conf", NoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(src); string(b) != "v1" {
		t.Fatalf("bound %q", b)
	}
	// An update does not change what the bind holds, as in the kubelet.
	p.Files = map[string]File{"conf": {Data: []byte("v2")}}
	if _, err := r.WriteProjection(p); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(src); string(b) != "v1" {
		t.Fatalf("subPath bind changed to %q", b)
	}
	if _, err := r.BindSubPath(SubPath{UID: uid, Volume: "cfg", Container: "c", Index: 1, VolumePath: data, Path: "missing", NoCreate: true}); err == nil {
		t.Fatal("a missing subPath was made")
	}
}

// TestPodsDirIsPrivate: the pods directory, under which the Secrets are,
// is reachable by root alone, as the kubelet's; an existing one is fixed.
func TestPodsDirIsPrivate(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "pods"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := New(dir)
	if _, err := r.WriteProjection(Projection{UID: uid, Volume: "cfg", Files: map[string]File{"a": {Data: []byte("x")}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.RemovePod(uid) })
	fi, err := os.Stat(filepath.Join(dir, "pods"))
	if err != nil || fi.Mode().Perm() != PodsDirMode {
		t.Fatalf("pods dir %v %v, want mode %o", fi.Mode(), err, PodsDirMode)
	}
}

// TestGroupChangeRewrites: a new fsGroup is applied to files whose
// contents did not change.
func TestGroupChangeRewrites(t *testing.T) {
	needRoot(t)
	r := New(t.TempDir())
	t.Cleanup(func() { _ = r.RemovePod(uid) })
	g1, g2 := int64(1000), int64(2000)
	p := Projection{UID: uid, Volume: "cfg", GID: &g1, Now: time.Now(), Files: map[string]File{"a": {Data: []byte("x"), Mode: 0o400}}}
	if _, err := r.WriteProjection(p); err != nil {
		t.Fatal(err)
	}
	p.GID = &g2
	wrote, err := r.WriteProjection(p)
	if err != nil || !wrote {
		t.Fatalf("a new fsGroup was not applied: %v %v", wrote, err)
	}
	dir, _ := r.ProjectedDir(uid, "cfg")
	fi, err := os.Stat(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Gid != 2000 || fi.Mode().Perm() != 0o440 {
		t.Fatalf("file gid %d mode %o, want 2000 0440", st.Gid, fi.Mode().Perm())
	}
}
