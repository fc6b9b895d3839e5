package podfs

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// WriteProjection makes p's volume directory (ProjectedDir) hold exactly
// p.Files with the kubelet's atomic layout: a new "..<time>" directory,
// then "..data" swapped to it by one rename, then the top-level symlinks
// added or removed and the old directory deleted. With p.Tmpfs the
// directory is first mounted as a tmpfs (once; RemovePod unmounts it). It
// writes nothing and reports false when the current files already match.
//
// Misuse: the directory must be mounted read-only into containers, as the
// kubelet does; every step goes through an os.Root of it anyway.
func (r Root) WriteProjection(p Projection) (bool, error) {
	if err := checkProjectionPaths(p.Files); err != nil {
		return false, err
	}
	if err := r.Prepare(); err != nil {
		return false, err
	}
	dir, err := r.ProjectedDir(p.UID, p.Volume)
	if err != nil {
		return false, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	if p.Tmpfs {
		if err := mountTmpfs(dir, p.SizeBytes); err != nil {
			return false, err
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return false, err
	}
	defer root.Close()
	old, err := dataTarget(root, dir)
	if err != nil {
		return false, err
	}
	if old != "" && sameFiles(root, old, p) {
		return false, linkTopLevel(root, p.Files, nil)
	}
	ts, err := newTimestampDir(root, p)
	if err != nil {
		return false, err
	}
	if err := writeFiles(root, ts, p); err != nil {
		_ = root.RemoveAll(ts)
		return false, err
	}
	_ = root.Remove(dataLinkTmp)
	if err := root.Symlink(ts, dataLinkTmp); err != nil {
		_ = root.RemoveAll(ts)
		return false, err
	}
	if err := root.Rename(dataLinkTmp, dataLink); err != nil {
		_ = root.RemoveAll(ts)
		return false, err
	}
	var gone map[string]bool
	if old != "" {
		gone = oldTopLevel(root, old)
	}
	if err := linkTopLevel(root, p.Files, gone); err != nil {
		return true, err
	}
	if old != "" {
		if err := root.RemoveAll(old); err != nil {
			return true, err
		}
	}
	return true, nil
}

// ProjectionDataDir is the current timestamped directory of a projected
// volume, for binding a subPath of it (the kubelet resolves such a subPath
// through "..data" too, so the bind keeps the files of that moment).
func (r Root) ProjectionDataDir(uid, volume string) (string, error) {
	dir, err := r.ProjectedDir(uid, volume)
	if err != nil {
		return "", err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	ts, err := dataTarget(root, dir)
	if err != nil {
		return "", err
	}
	if ts == "" {
		return "", fmt.Errorf("projected volume %s not written", volume)
	}
	return r.confine(uid, projectedDir, volume, ts)
}

// dataTarget is the "..<time>" entry the volume's "..data" link names, ""
// when there is no such link; one naming anything else is refused.
func dataTarget(root *os.Root, dir string) (string, error) {
	ts, err := root.Readlink(dataLink)
	if err != nil {
		return "", nil
	}
	if strings.Contains(ts, "/") || !strings.HasPrefix(ts, "..") {
		return "", fmt.Errorf("%w: %s/%s points to %q", ErrUnsafe, dir, dataLink, ts)
	}
	return ts, nil
}

// mountTmpfs mounts a tmpfs on dir unless one is there.
func mountTmpfs(dir string, size int64) error {
	mounted, err := isMounted(dir)
	if err != nil || mounted {
		return err
	}
	opts := "mode=0755"
	if size > 0 {
		opts += ",size=" + strconv.FormatInt(size, 10)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return &os.PathError{Op: "mount tmpfs", Path: dir, Err: err}
	}
	return nil
}

func newTimestampDir(root *os.Root, p Projection) (string, error) {
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := ".." + p.Now.UTC().Format(tsLayout) + "." + hex.EncodeToString(rnd[:])
	if err := root.Mkdir(name, 0o755); err != nil {
		return "", err
	}
	return name, own(root, name, p.GID, true)
}

// writeFiles writes p.Files under ts, making their directories.
func writeFiles(root *os.Root, ts string, p Projection) error {
	for _, name := range sortedFileNames(p.Files) {
		f := p.Files[name]
		full := ts + "/" + name
		if d := path.Dir(name); d != "." {
			parts := strings.Split(d, "/")
			for i := range parts {
				sub := ts + "/" + strings.Join(parts[:i+1], "/")
				if err := root.Mkdir(sub, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
					return err
				}
				if err := own(root, sub, p.GID, true); err != nil {
					return err
				}
			}
		}
		mode := f.Mode.Perm()
		if mode == 0 && f.Mode == 0 {
			mode = 0o644
		}
		if err := root.WriteFile(full, f.Data, mode); err != nil {
			return err
		}
		if err := root.Chmod(full, mode); err != nil { // umask aside
			return err
		}
		if err := own(root, full, p.GID, false); err != nil {
			return err
		}
	}
	return nil
}

// own gives name the fsGroup gid, with group read (and search for a
// directory, setgid too), as the kubelet's SetVolumeOwnership for a
// read-only volume.
func own(root *os.Root, name string, gid *int64, dir bool) error {
	if gid == nil {
		return nil
	}
	if err := root.Lchown(name, -1, int(*gid)); err != nil {
		return err
	}
	fi, err := root.Lstat(name)
	if err != nil {
		return err
	}
	mode := fi.Mode().Perm() | 0o440
	if dir {
		mode |= 0o110 | fs.ModeSetgid
	}
	return root.Chmod(name, mode)
}

// sameFiles reports whether directory ts holds exactly p's files, with the
// same contents and modes.
func sameFiles(root *os.Root, ts string, p Projection) bool {
	n := 0
	same := true
	err := fs.WalkDir(root.FS(), ts, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel := strings.TrimPrefix(name, ts+"/")
		f, ok := p.Files[rel]
		if !ok || !d.Type().IsRegular() {
			same = false
			return fs.SkipAll
		}
		n++
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := f.Mode.Perm()
		if want == 0 && f.Mode == 0 {
			want = 0o644
		}
		if p.GID != nil {
			want |= 0o440
		}
		if fi.Size() != int64(len(f.Data)) || fi.Mode().Perm() != want || !sameGroup(fi, p.GID) {
			same = false
			return fs.SkipAll
		}
		data, err := root.ReadFile(name)
		if err != nil || !bytes.Equal(data, f.Data) {
			same = false
			return fs.SkipAll
		}
		return nil
	})
	return err == nil && same && n == len(p.Files)
}

// sameGroup reports whether fi's group is gid (nil: any group).
func sameGroup(fi fs.FileInfo, gid *int64) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return gid == nil || !ok || int64(st.Gid) == *gid
}

// oldTopLevel is the set of top-level names of the old payload in ts.
func oldTopLevel(root *os.Root, ts string) map[string]bool {
	out := map[string]bool{}
	ents, err := fs.ReadDir(root.FS(), ts)
	if err != nil {
		return out
	}
	for _, e := range ents {
		out[e.Name()] = true
	}
	return out
}

// linkTopLevel makes a symlink name -> ..data/name for each top-level name
// of files, and removes the names in gone that files no longer has (only
// if they are such symlinks).
func linkTopLevel(root *os.Root, files map[string]File, gone map[string]bool) error {
	want := topLevel(files)
	for name := range want {
		target := dataLink + "/" + name
		if cur, err := root.Readlink(name); err == nil && cur == target {
			continue
		}
		_ = root.Remove(name)
		if err := root.Symlink(target, name); err != nil {
			return err
		}
	}
	for name := range gone {
		if want[name] || strings.HasPrefix(name, "..") {
			continue
		}
		if cur, err := root.Readlink(name); err == nil && cur == dataLink+"/"+name {
			if err := root.Remove(name); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedFileNames(files map[string]File) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
