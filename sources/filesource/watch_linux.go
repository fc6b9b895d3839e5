package filesource

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// inotifyMask is what a directory watch asks for. IN_MOVED_TO and
// IN_CLOSE_WRITE tell that a file is complete, which fsnotify's portable API
// cannot say; that is why Linux has its own watcher.
const inotifyMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM |
	unix.IN_DELETE | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// inotify is a watcher on Linux's inotify.
type inotify struct {
	f      *os.File
	evs    chan fileEvent
	errs   chan error
	done   chan struct{}
	mu     sync.Mutex
	dirs   map[int]string // watch descriptor -> directory
	closed sync.Once
}

func newWatcher() (watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	w := &inotify{f: os.NewFile(uintptr(fd), "inotify"), evs: make(chan fileEvent, 64), errs: make(chan error, 1),
		done: make(chan struct{}), dirs: map[int]string{}}
	go w.read()
	return w, nil
}

func (w *inotify) add(dir string) error {
	wd, err := unix.InotifyAddWatch(int(w.f.Fd()), dir, inotifyMask)
	if err != nil {
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	w.mu.Lock()
	w.dirs[wd] = dir
	w.mu.Unlock()
	return nil
}

func (w *inotify) remove(dir string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for wd, d := range w.dirs {
		if d == dir {
			delete(w.dirs, wd)
			_, _ = unix.InotifyRmWatch(int(w.f.Fd()), uint32(wd))
		}
	}
	return nil
}

func (w *inotify) watching(dir string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, d := range w.dirs {
		if d == dir {
			return true
		}
	}
	return false
}

func (w *inotify) events() <-chan fileEvent { return w.evs }
func (w *inotify) errors() <-chan error     { return w.errs }

func (w *inotify) close() error {
	var err error
	w.closed.Do(func() {
		close(w.done)
		err = w.f.Close() // ends the read
	})
	return err
}

// read turns inotify records into events until the watcher is closed.
func (w *inotify) read() {
	defer close(w.evs)
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			if !errors.Is(err, os.ErrClosed) {
				select {
				case w.errs <- fmt.Errorf("inotify read: %w", err):
				default:
				}
			}
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			raw := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(raw.Len)]
			off += unix.SizeofInotifyEvent + int(raw.Len)
			ev, ok := w.event(raw, name)
			if !ok {
				continue
			}
			select {
			case w.evs <- ev:
			case <-w.done:
				return
			}
		}
	}
}

func (w *inotify) event(raw *unix.InotifyEvent, name []byte) (fileEvent, bool) {
	if raw.Mask&unix.IN_Q_OVERFLOW != 0 {
		// Events were lost: whatever changed, a scan sees it.
		return fileEvent{complete: true}, true
	}
	w.mu.Lock()
	dir, ok := w.dirs[int(raw.Wd)]
	switch {
	case raw.Mask&unix.IN_IGNORED != 0:
		delete(w.dirs, int(raw.Wd)) // the directory went; the next scan re-adds
	case raw.Mask&unix.IN_MOVE_SELF != 0:
		// Renamed away: its events would now be of another path. The next
		// scan watches whatever is at the path now.
		delete(w.dirs, int(raw.Wd))
		_, _ = unix.InotifyRmWatch(int(w.f.Fd()), uint32(raw.Wd))
	}
	w.mu.Unlock()
	if !ok {
		return fileEvent{}, false
	}
	for len(name) > 0 && name[len(name)-1] == 0 {
		name = name[:len(name)-1]
	}
	path := dir
	if len(name) > 0 {
		path = filepath.Join(dir, string(name))
	}
	// A move away is not complete: editors save by moving the old file
	// away and writing the new one, and a scan in between would drop the
	// pod. Nor is an unlink: install(1), cp --remove-destination and git
	// checkout unlink a file and create it again, so its pods stop only
	// when no new file came within the debounce.
	const whole = unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE
	return fileEvent{name: path, complete: raw.Mask&whole != 0, op: inotifyOp(raw.Mask), cookie: raw.Cookie}, true
}

func inotifyOp(mask uint32) fileOp {
	switch {
	case mask&unix.IN_ISDIR != 0:
		return opOther
	case mask&unix.IN_DELETE != 0:
		return opRemoved
	case mask&unix.IN_MOVED_FROM != 0:
		return opMovedOut
	case mask&unix.IN_MOVED_TO != 0:
		return opMovedIn
	case mask&unix.IN_CLOSE_WRITE != 0:
		return opClosed
	case mask&(unix.IN_CREATE|unix.IN_MODIFY) != 0:
		return opWrite
	}
	return opOther
}
