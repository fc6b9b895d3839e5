package podfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzConfined feeds hostile pod UIDs, volume (and container) names and
// subPaths through every path function, BindSubPath and RemovePod: nothing
// returned may be outside root_dir, and nothing outside root_dir may be
// created, changed or removed. A volume holds a symlink "esc" to a
// directory outside. Binds need root; without it the subPath is skipped.
func FuzzConfined(f *testing.F) {
	for _, s := range [][3]string{
		{"0123abcd-0000-0000-0000-000000000000", "data", "sub/dir"},
		{"web-1", "conf", "app.conf"},
		{"aaaaaaaa/../../../../tmp", "data", "x"},
		{"..", "data", "x"},
		{".", "..", "."},
		{"", "", ""},
		{"a/b", "v", "v"},
		{"a\x00b", "v\x00", "x\x00y"},
		{"uid", "../volumes", "../x"},
		{"uid", "v/../..", "/etc"},
		{"uid", "v", "esc"},
		{"uid", "v", "esc/x"},
		{"uid", "v", "a/../../x"},
		{"uid", "v", "a/./b/../c"},
		{"UID", "V", "a"},
		{"0123ABCD-0000-0000-0000-00000000000F", "v", "a//b/"},
		{"-uid", "v-", "x"},
		{strings.Repeat("a", 64), strings.Repeat("v", 64), strings.Repeat("s/", 40)},
	} {
		f.Add(s[0], s[1], s[2])
	}
	canMount := os.Geteuid() == 0
	f.Fuzz(func(t *testing.T, uid, volume, sub string) {
		base := t.TempDir()
		t.Cleanup(func() { // a failed iteration's binds, before base goes
			mps, _ := mountPoints(base)
			for _, mp := range mps {
				_ = unmountAll(mp)
			}
		})
		rootDir := filepath.Join(base, "root")
		outside := filepath.Join(base, "outside")
		for _, d := range []string{rootDir, outside} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(outside, "keep"), []byte("keep"), 0o600); err != nil {
			t.Fatal(err)
		}
		r := New(rootDir)
		within := func(what, p string) {
			t.Helper()
			rel, err := filepath.Rel(rootDir, p)
			if err != nil || !filepath.IsLocal(rel) {
				t.Fatalf("%s returned %q, outside root_dir %s", what, p, rootDir)
			}
		}
		var made []string
		try := func(what string, p string, err error) {
			t.Helper()
			if err == nil {
				within(what, p)
				made = append(made, p)
			}
		}
		p, err := r.PodDir(uid)
		try("PodDir", p, err)
		podOK := err == nil
		p, err = r.ContainerDir(uid, volume, 3)
		try("ContainerDir", p, err)
		p, err = r.TerminationLog(uid, volume, 0)
		try("TerminationLog", p, err)
		p, err = r.SubpathDir(uid, volume, volume, 1)
		try("SubpathDir", p, err)
		vol, err := r.VolumeDir(uid, volume)
		try("VolumeDir", vol, err)
		if err == nil {
			if err := os.MkdirAll(vol, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(vol, "esc")); err != nil {
				t.Fatal(err)
			}
			if canMount {
				target, err := r.BindSubPath(SubPath{UID: uid, Volume: volume, Container: volume, Index: 0,
					VolumePath: vol, Path: sub, Mode: 0o755})
				if err == nil {
					within("BindSubPath", target)
					if fi, err := os.Stat(target); err == nil {
						if out, _ := os.Stat(outside); os.SameFile(fi, out) {
							t.Fatalf("subPath %q bound the directory outside root_dir", sub)
						}
					}
				}
			}
		}
		err = r.RemovePod(uid)
		if podOK && err != nil {
			t.Fatalf("RemovePod(%q): %v", uid, err)
		}
		if podOK {
			if mps, err := mountPoints(rootDir); err != nil || len(mps) > 0 {
				t.Fatalf("mounts left under root_dir after RemovePod: %v %v", mps, err)
			}
		}
		// Outside root_dir: exactly what the test made.
		var seen []string
		err = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p == rootDir {
				return filepath.SkipDir
			}
			seen = append(seen, p)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{base, outside, filepath.Join(outside, "keep")}; !slices.Equal(seen, want) {
			t.Fatalf("outside root_dir: %v, want %v (paths tried %v)", seen, want, made)
		}
		if data, err := os.ReadFile(filepath.Join(outside, "keep")); err != nil || string(data) != "keep" {
			t.Fatalf("the file outside root_dir changed: %q %v", data, err)
		}
	})
}
