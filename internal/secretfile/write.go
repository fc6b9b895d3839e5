package secretfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WritePrivate replaces the file at path with data, mode 0600 whatever
// the file's mode was: data goes to a new file of mode 0600 beside it,
// renamed over it, so no reader ever sees data in a file group or others
// may read, nor through a descriptor opened before. Symlinks on the way
// (the file, or a directory of its path) are followed only when they are
// the caller's or root's (see followLinks): another user's symlink is an
// error, as anyone may plant one in /tmp pointing at a file of root's.
// The file becomes the caller's (an owner kept from the old file could be
// whoever planted it); missing directories are made 0700.
func WritePrivate(path string, data []byte) error {
	dest, dir, err := followLinks(path)
	if err != nil {
		return err
	}
	if dir == nil {
		if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
			return err
		}
		// The made directories are the caller's; what was missing
		// before may have been put there by someone else since.
		if dest, dir, err = followLinks(path); err != nil {
			return err
		}
		if dir == nil {
			return fmt.Errorf("%s: its directory disappeared while being made", path)
		}
	}
	// Every step below is relative to the directory reached, which must
	// be the one checked: a path component swapped for a symlink since
	// reaches another directory, refused here, and changes nothing after.
	root, err := os.OpenRoot(filepath.Dir(dest))
	if err != nil {
		return err
	}
	defer root.Close()
	if fi, err := root.Stat("."); err != nil || !os.SameFile(fi, dir) {
		return fmt.Errorf("%s: the directory %s changed while being written; try again", path, filepath.Dir(dest))
	}
	base := filepath.Base(dest)
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	tmpName := "." + base + ".tmp-" + hex.EncodeToString(suffix[:])
	tmp, err := root.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer root.Remove(tmpName)               // after a successful rename, removes nothing
	if err := tmp.Chmod(0o600); err != nil { // whatever the umask
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := root.Rename(tmpName, base); err != nil {
		return fmt.Errorf("replace %s: %w", dest, err)
	}
	return nil
}

// maxLinks bounds the symlinks one path may go through, as the kernel's 40.
const maxLinks = 40

// followLinks resolves path as the kernel would, to dest, a path without
// symlinks, and dir, dest's directory as its walk found it (nil when it,
// or one of its parents, does not exist yet). It follows a symlink only
// when its owner is the caller (effective uid) or root: stricter than
// Linux's fs.protected_symlinks, which refuses another user's symlink only
// in a sticky world-writable directory such as /tmp, and which berth would
// sidestep anyway by resolving links itself. A symlink of anyone else is
// an error naming it and its owner.
func followLinks(path string) (dest string, dir fs.FileInfo, err error) {
	abs := path // not cleaned: ".." after a symlink leaves where it led
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return "", nil, err
		}
		abs = wd + "/" + path
	}
	rootInfo, err := os.Lstat("/")
	if err != nil {
		return "", nil, err
	}
	me := os.Geteuid()
	todo := strings.Split(abs, "/")
	// walked are the directories (then the file) from / to cur, each as
	// Lstat found it: none a symlink.
	walked := []fs.FileInfo{rootInfo}
	cur, links := "/", 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			if len(walked) > 1 {
				cur, walked = filepath.Dir(cur), walked[:len(walked)-1]
			}
			continue
		}
		if !walked[len(walked)-1].IsDir() {
			return "", nil, fmt.Errorf("%s: %s is not a directory", path, cur)
		}
		next := filepath.Join(cur, name)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return missing(path, next, walked[len(walked)-1], todo)
		}
		if err != nil {
			return "", nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur, walked = next, append(walked, fi)
			continue
		}
		if owner, ok := fileOwner(fi); !ok || (owner != me && owner != 0) {
			who := "an unknown user"
			if ok {
				who = fmt.Sprintf("uid %d", owner)
			}
			return "", nil, fmt.Errorf("refusing to follow the symlink %s: it belongs to %s, not to you (uid %d) nor root, "+
				"so it may point at any file of yours; remove it or name its target", next, who, me)
		}
		if links++; links > maxLinks {
			return "", nil, fmt.Errorf("%s: more than %d symlinks", path, maxLinks)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", nil, err
		}
		if filepath.IsAbs(target) {
			cur, walked = "/", walked[:1]
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	if len(walked) < 2 || walked[len(walked)-1].IsDir() {
		return "", nil, fmt.Errorf("%s is a directory", path)
	}
	return cur, walked[len(walked)-2], nil
}

// missing is followLinks' answer when next does not exist, in the
// directory parent (as walked), and todo is the rest of the path: dest is
// next followed by todo; dir is parent when next is the file itself, else
// nil (to make).
func missing(path, next string, parent fs.FileInfo, todo []string) (dest string, dir fs.FileInfo, err error) {
	var rest []string
	for _, name := range todo {
		switch name {
		case "", ".":
		case "..":
			return "", nil, fmt.Errorf("%s: %s: %w", path, next, fs.ErrNotExist)
		default:
			rest = append(rest, name)
		}
	}
	if len(rest) > 0 {
		return filepath.Join(append([]string{next}, rest...)...), nil, nil
	}
	return next, parent, nil
}
