package filesource

import "time"

// fileChurn is what a Source's watch said lately of its files: which
// are being written (created or written to, not yet closed), when each last
// changed, and which were renamed to what (inotify pairs a rename's halves
// by a cookie). A scan keeps the last decode of a file being written, and
// declOwners holds a key from its file's last change. Without a watch it
// knows nothing, and scans read every file as it is. Not safe for
// concurrent use: the Run loop owns it.
type fileChurn struct {
	// quiet is how long after its last write a file not yet closed is
	// read anyway (the debounce): a writer that keeps it open is not
	// waited for beyond that.
	quiet   time.Duration
	writing map[string]time.Time // path → its last write
	changed map[string]time.Time // path → its last event, within quiet
	// movedOut is the path of each rename's first half, by cookie, until
	// its second half; renamed is each rename's new path, by the old.
	movedOut map[uint32]moveOut
	renamed  map[string]moveOut
	seq      uint64
}

// moveOut is one half of a rename: a path, when it was seen, and the
// rename's place in the order of events.
type moveOut struct {
	path string
	at   time.Time
	seq  uint64
}

func newFileChurn(quiet time.Duration) *fileChurn {
	return &fileChurn{quiet: quiet, writing: map[string]time.Time{}, changed: map[string]time.Time{},
		movedOut: map[uint32]moveOut{}, renamed: map[string]moveOut{}}
}

// see records one event, seen at now.
func (c *fileChurn) see(ev fileEvent, now time.Time) {
	if ev.name == "" {
		return
	}
	c.changed[ev.name] = now
	switch ev.op {
	case opWrite:
		c.writing[ev.name] = now
	case opClosed:
		delete(c.writing, ev.name)
	case opMovedIn:
		delete(c.writing, ev.name)
		if from, ok := c.movedOut[ev.cookie]; ok && ev.cookie != 0 {
			delete(c.movedOut, ev.cookie)
			c.seq++
			c.renamed[from.path] = moveOut{ev.name, now, c.seq}
		}
	case opMovedOut:
		delete(c.writing, ev.name)
		if ev.cookie != 0 {
			c.movedOut[ev.cookie] = moveOut{ev.name, now, 0}
		}
	case opRemoved:
		delete(c.writing, ev.name)
	}
}

// inFlux reports whether file is being written at now: a scan must not
// read it yet.
func (c *fileChurn) inFlux(file string, now time.Time) bool {
	at, ok := c.writing[file]
	return ok && now.Sub(at) < c.quiet
}

// changedAt is when the watch last saw file change, if within the quiet
// time of the last scan (else the zero time).
func (c *fileChurn) changedAt(file string) time.Time { return c.changed[file] }

// renamedTo is the path file was renamed to within the directory, lately,
// following later renames of the new name; "" when the watch saw none.
func (c *fileChurn) renamedTo(file string) string {
	to := ""
	var seq uint64
	for range 8 {
		next, ok := c.renamed[file]
		if !ok || next.seq <= seq {
			break
		}
		to, file, seq = next.path, next.path, next.seq
	}
	return to
}

// scanned forgets the writes, changes and renames grown quiet.
func (c *fileChurn) scanned(now time.Time) {
	for _, m := range []map[string]time.Time{c.writing, c.changed} {
		for f, at := range m {
			if now.Sub(at) >= c.quiet {
				delete(m, f)
			}
		}
	}
	for k, m := range c.movedOut { // renamed out of the directory
		if now.Sub(m.at) >= c.quiet {
			delete(c.movedOut, k)
		}
	}
	for f, m := range c.renamed {
		if now.Sub(m.at) >= c.quiet {
			delete(c.renamed, f)
		}
	}
}
