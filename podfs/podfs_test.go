package podfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const uid = "0123abcd-0000-0000-0000-000000000000"

func TestPathsUnderRoot(t *testing.T) {
	root := t.TempDir()
	r := New(root)
	got := map[string]func() (string, error){
		"pods/" + uid: func() (string, error) { return r.PodDir(uid) },
		"pods/web-1":  func() (string, error) { return r.PodDir("web-1") },
		"pods/0123ABCD-0000-0000-0000-00000000000F":         func() (string, error) { return r.PodDir("0123ABCD-0000-0000-0000-00000000000F") },
		"pods/" + uid + "/volumes/data":                     func() (string, error) { return r.VolumeDir(uid, "data") },
		"pods/" + uid + "/containers/app/2":                 func() (string, error) { return r.ContainerDir(uid, "app", 2) },
		"pods/" + uid + "/containers/app/0/termination-log": func() (string, error) { return r.TerminationLog(uid, "app", 0) },
		"pods/" + uid + "/volume-subpaths/data/app/3":       func() (string, error) { return r.SubpathDir(uid, "data", "app", 3) },
	}
	for want, fn := range got {
		p, err := fn()
		if err != nil || p != filepath.Join(root, want) {
			t.Errorf("%s: got %q, %v", want, p, err)
		}
	}
}

func TestRefusesNames(t *testing.T) {
	r := New(t.TempDir())
	for _, bad := range []string{"", ".", "..", "a/b", "aaaaaaaa/../../../../etc", "/etc", "a\x00", "UPPER", "-a", "a_b", strings.Repeat("a", 64)} {
		if p, err := r.PodDir(bad); !errors.Is(err, ErrUnsafe) {
			t.Errorf("PodDir(%q) = %q, %v; want ErrUnsafe", bad, p, err)
		}
		if p, err := r.VolumeDir(uid, bad); !errors.Is(err, ErrUnsafe) {
			t.Errorf("VolumeDir(%q) = %q, %v; want ErrUnsafe", bad, p, err)
		}
		if p, err := r.SubpathDir(uid, "v", bad, 0); !errors.Is(err, ErrUnsafe) {
			t.Errorf("SubpathDir container %q = %q, %v; want ErrUnsafe", bad, p, err)
		}
		if err := r.RemovePod(bad); !errors.Is(err, ErrUnsafe) {
			t.Errorf("RemovePod(%q) = %v; want ErrUnsafe", bad, err)
		}
	}
	if p, err := r.ContainerDir(uid, "app", -1); !errors.Is(err, ErrUnsafe) {
		t.Errorf("a negative attempt: %q, %v", p, err)
	}
}

// TestResolvesSymlinks: a symlink under root_dir that leads out of it
// makes every path through it refused.
func TestResolvesSymlinks(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "pods"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "pods", uid)); err != nil {
		t.Fatal(err)
	}
	r := New(root)
	if p, err := r.VolumeDir(uid, "data"); !errors.Is(err, ErrUnsafe) {
		t.Errorf("VolumeDir through a symlink out: %q, %v", p, err)
	}
	if err := r.RemovePod(uid); !errors.Is(err, ErrUnsafe) {
		t.Errorf("RemovePod through a symlink out: %v", err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatal(err)
	}
	// A root_dir that is itself a symlink is fine.
	link := filepath.Join(t.TempDir(), "root")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	if _, err := New(link).PodDir("other"); err != nil {
		t.Errorf("root_dir through a symlink: %v", err)
	}
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("bind mounts need root")
	}
}

// volume makes pod uid's emptyDir data, holding a file, a directory and a
// symlink "esc" to outside.
func volume(t *testing.T, r Root, outside string) string {
	t.Helper()
	vol, err := r.VolumeDir(uid, "data")
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		os.MkdirAll(filepath.Join(vol, "dir"), 0o755),
		os.WriteFile(filepath.Join(vol, "file"), []byte("in"), 0o644),
		os.Symlink(outside, filepath.Join(vol, "esc")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = r.RemovePod(uid) })
	return vol
}

func TestBindSubPath(t *testing.T) {
	needRoot(t)
	r, outside := New(t.TempDir()), t.TempDir()
	vol := volume(t, r, outside)
	sp := func(index int, sub string) SubPath {
		return SubPath{UID: uid, Volume: "data", Container: "app", Index: index, VolumePath: vol, Path: sub, Mode: 0o750}
	}
	for sub, msg := range map[string]string{"esc": "is a symlink", "esc/x": "is a symlink", "../x": "relative path inside",
		"/etc": "relative path inside", "file/x": "not a directory"} {
		if p, err := r.BindSubPath(sp(0, sub)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("subPath %q: %q, %v; want %q", sub, p, err, msg)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("a subPath made something outside the volume")
	}

	var owned []string
	s := sp(1, "made/here")
	s.Own = func(d *os.File) error {
		owned = append(owned, d.Name())
		return d.Chmod(0o777 | os.ModeSetgid)
	}
	target, err := r.BindSubPath(s)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := r.SubpathDir(uid, "data", "app", 1); target != want {
		t.Errorf("target %s, want %s", target, want)
	}
	if strings.Join(owned, ",") != "made,here" {
		t.Errorf("Own called on %v, want made,here", owned)
	}
	made, _ := os.Stat(filepath.Join(vol, "made/here"))
	bound, _ := os.Stat(target)
	if !os.SameFile(made, bound) || made.Mode().Perm() != 0o777 || made.Mode()&os.ModeSetgid == 0 {
		t.Errorf("bind %v of made/here %v", bound, made)
	}
	if again, err := r.BindSubPath(s); err != nil || again != target {
		t.Errorf("a second bind: %q, %v", again, err)
	}
	if mps, _ := mountPoints(target); len(mps) != 1 {
		t.Errorf("%d mounts at %s after binding twice, want 1 (reused)", len(mps), target)
	}
	// The index now names another file: the old bind is replaced.
	s.Path = "dir"
	if _, err := r.BindSubPath(s); err != nil {
		t.Fatal(err)
	}
	dir, _ := os.Stat(filepath.Join(vol, "dir"))
	if bound, _ := os.Stat(target); !os.SameFile(dir, bound) {
		t.Error("the bind was not replaced by one of the new subPath")
	}
	// A file subPath gets a file target.
	ft, err := r.BindSubPath(sp(2, "file"))
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(ft); err != nil || string(data) != "in" {
		t.Errorf("file bind reads %q, %v", data, err)
	}
}

// TestBindSurvivesSwap: once bound, exchanging the subPath's directory
// with a symlink out of the volume changes nothing the target shows.
func TestBindSurvivesSwap(t *testing.T) {
	needRoot(t)
	r, outside := New(t.TempDir()), t.TempDir()
	vol := volume(t, r, outside)
	target, err := r.BindSubPath(SubPath{UID: uid, Volume: "data", Container: "app", VolumePath: vol, Path: "dir", Mode: 0o750})
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(vol, "dir"), unix.AT_FDCWD, filepath.Join(vol, "esc"), unix.RENAME_EXCHANGE); err != nil {
		t.Fatal(err)
	}
	bound, _ := os.Stat(target)
	out, _ := os.Stat(outside)
	moved, _ := os.Lstat(filepath.Join(vol, "esc"))
	if os.SameFile(bound, out) || !os.SameFile(bound, moved) {
		t.Error("the bind follows the name, not the directory it opened")
	}
}

// TestRemovePodNeverCrossesAMount: subPath binds are unmounted and
// removed; any other mount below the pod's directory (a bind of a host
// directory) is left, reported, and nothing is deleted through it.
func TestRemovePodNeverCrossesAMount(t *testing.T) {
	needRoot(t)
	r, outside := New(t.TempDir()), t.TempDir()
	vol := volume(t, r, outside)
	if err := os.WriteFile(filepath.Join(outside, "precious"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := r.BindSubPath(SubPath{UID: uid, Volume: "data", Container: "app", VolumePath: vol, Path: "dir", Mode: 0o750}); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(vol, "dir", "stray")
	if err := os.Mkdir(stray, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(outside, stray, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(stray, unix.MNT_DETACH) })
	err := r.RemovePod(uid)
	if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), stray) {
		t.Errorf("RemovePod with a mount below: %v, want a refusal naming %s", err, stray)
	}
	if _, err := os.Stat(filepath.Join(outside, "precious")); err != nil {
		t.Fatalf("removed through a mount point: %v", err)
	}
	sub, _ := r.SubpathDir(uid, "data", "app", 0)
	if _, err := os.Lstat(sub); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("subPath bind target left: %v", err)
	}
	if err := unix.Unmount(stray, unix.MNT_DETACH); err != nil {
		t.Fatal(err)
	}
	if err := r.RemovePod(uid); err != nil {
		t.Fatal(err)
	}
	if p, _ := r.PodDir(uid); exists(p) {
		t.Error("the pod directory is still there")
	}
	if err := r.RemovePod(uid); err != nil {
		t.Errorf("removing a removed pod: %v", err)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// A root_dir reached through a symlink is resolved once, so the paths
// podfs returns are the kernel's and its mount checks see the pod's binds.
func TestRootThroughSymlinkIsResolved(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "berth")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	r := New(link)
	resolved, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	if r.Dir() != resolved {
		t.Fatalf("root %s, want %s", r.Dir(), resolved)
	}
	p, err := r.PodDir("0b7e5a3c-1111-4222-8333-944445555666")
	if err != nil || !strings.HasPrefix(p, resolved+string(filepath.Separator)) {
		t.Errorf("pod dir %q %v", p, err)
	}
}
