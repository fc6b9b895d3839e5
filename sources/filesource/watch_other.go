//go:build !linux

package filesource

import (
	"slices"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// fsWatcher is the portable watcher, on fsnotify. It cannot tell a complete
// file from one being written, so no event is complete.
type fsWatcher struct {
	w      *fsnotify.Watcher
	evs    chan fileEvent
	done   chan struct{}
	closed sync.Once
}

func newWatcher() (watcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	fw := &fsWatcher{w: w, evs: make(chan fileEvent, 64), done: make(chan struct{})}
	go func() {
		defer close(fw.evs)
		for ev := range w.Events { // closed by Close
			select {
			case fw.evs <- fileEvent{name: ev.Name, op: fsnotifyOp(ev.Op)}:
			case <-fw.done:
				return
			}
		}
	}()
	return fw, nil
}

func (f *fsWatcher) add(dir string) error     { return f.w.Add(dir) }
func (f *fsWatcher) remove(dir string) error  { return f.w.Remove(dir) }
func (f *fsWatcher) watching(dir string) bool { return slices.Contains(f.w.WatchList(), dir) }
func (f *fsWatcher) events() <-chan fileEvent { return f.evs }
func (f *fsWatcher) errors() <-chan error     { return f.w.Errors }

func (f *fsWatcher) close() error {
	f.closed.Do(func() { close(f.done) })
	return f.w.Close()
}

// fsnotifyOp is the fileOp of an fsnotify event: it cannot tell a rename
// into the directory from a create, nor see a close.
func fsnotifyOp(op fsnotify.Op) fileOp {
	switch {
	case op.Has(fsnotify.Remove):
		return opRemoved
	case op.Has(fsnotify.Rename):
		return opMovedOut
	case op.Has(fsnotify.Create), op.Has(fsnotify.Write):
		return opWrite
	}
	return opOther
}
