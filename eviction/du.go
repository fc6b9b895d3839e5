package eviction

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// The bounds of one volume's walk: an untrusted pod must not make berth's
// housekeeping endless. Past them the walk stops and its sum is a lower
// bound (logged), which still evicts when it exceeds the limit.
const (
	duMaxEntries = 1_000_000
	duMaxDepth   = 512
)

// usage is what diskUsage measured.
type usage struct {
	bytes int64
	// truncated: the walk stopped at its bounds or skipped entries it
	// could not read, so bytes is a lower bound.
	truncated bool
}

// diskUsage sums the space allocated to dir and everything under it as du
// counts it: st_blocks*512 of each inode, once (hard links), from lstat
// (symlinks are not followed), not crossing into other filesystems (mount
// points are skipped). It walks through an os.Root per directory, so
// nothing outside dir is reached even if the tree changes meanwhile, and
// no path grows past PATH_MAX. It stops early once the sum exceeds
// stopAbove (when > 0), at duMaxEntries entries or duMaxDepth levels, and
// when ctx ends. Only a failure to open dir itself is an error.
func diskUsage(ctx context.Context, dir string, stopAbove int64) (usage, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return usage{}, err
	}
	fi, err := root.Stat(".")
	if err != nil {
		root.Close()
		return usage{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		root.Close()
		return usage{}, fmt.Errorf("%s: no stat data", dir)
	}
	w := &duWalk{ctx: ctx, dev: uint64(st.Dev), stop: stopAbove, sum: int64(st.Blocks) * 512, seen: map[[2]uint64]bool{}}
	w.dir(root, fi, 0)
	return usage{bytes: w.sum, truncated: w.truncated}, nil
}

type duWalk struct {
	ctx       context.Context
	dev       uint64
	stop      int64
	sum       int64
	entries   int
	truncated bool
	// seen holds the (dev, ino) of files with more than one link.
	seen map[[2]uint64]bool
}

// done reports whether the walk stops: the sum is over stop, the entry
// bound is reached, or ctx ended.
func (w *duWalk) done() bool {
	return w.entries > duMaxEntries || (w.stop > 0 && w.sum > w.stop) || w.ctx.Err() != nil
}

// dir adds the entries under r (whose own size is counted), then closes r.
func (w *duWalk) dir(r *os.Root, self fs.FileInfo, depth int) {
	defer r.Close()
	f, err := r.Open(".")
	if err != nil {
		w.truncated = true
		return
	}
	defer f.Close()
	if cur, err := f.Stat(); err != nil || !os.SameFile(self, cur) {
		w.truncated = true // replaced since it was looked at
		return
	}
	for !w.done() {
		ents, err := f.ReadDir(256)
		for _, e := range ents {
			if w.entries++; w.entries > duMaxEntries {
				w.truncated = true
				return
			}
			w.entry(r, e.Name(), depth)
			if w.done() {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				w.truncated = true
			}
			return
		}
	}
}

// entry adds name, an entry of r, and what is under it.
func (w *duWalk) entry(r *os.Root, name string, depth int) {
	fi, err := r.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return // removed meanwhile
	}
	if err != nil {
		w.truncated = true
		return
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || uint64(st.Dev) != w.dev {
		return // another filesystem mounted here is not the volume's
	}
	if !fi.IsDir() && st.Nlink > 1 {
		id := [2]uint64{uint64(st.Dev), uint64(st.Ino)}
		if w.seen[id] {
			return
		}
		w.seen[id] = true
	}
	w.sum += int64(st.Blocks) * 512
	if !fi.IsDir() {
		return
	}
	if depth+1 >= duMaxDepth {
		w.truncated = true
		return
	}
	sub, err := r.OpenRoot(name)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			w.truncated = true
		}
		return
	}
	w.dir(sub, fi, depth+1)
}
