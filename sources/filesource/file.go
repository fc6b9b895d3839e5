// Package filesource is the file source of package sources: the manifest
// files at a path, watched and rescanned, each key kept with the file that
// declared it first.
package filesource

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/sources"
)

// DefaultDebounce is how long a file Source collects filesystem events of
// in-place writes, renames away and removals before it scans. Events that
// say a file is complete (a rename into the directory, a close after
// writing) scan at once.
const DefaultDebounce = 100 * time.Millisecond

// Source declares the pods of the manifest files at a path: a single file
// (read whatever its name), or a directory whose regular files (or symlinks to
// them) are read, non-recursively, whatever their names, as the kubelet reads
// them, except names starting with "." and editor swap and backup files
// (skipReason). Each file is one origin, named by the path joined with the
// file name; a ContainerManifest without an id is named after it
// (manifest.LegacyPodName). Each skipped entry but a hidden one is logged
// once, with the reason.
//
// A file that holds a Secret and that group or others may read adds a
// warning naming the file to every update (the source's status), logged
// once per change of the file.
//
// Run scans at once, on filesystem events (inotify on Linux, fsnotify
// elsewhere, on the directory or a single file's parent directory, so that
// atomic renames and Kubernetes-style "..data" symlink swaps are seen), and
// every rescan interval; each scan sends one complete Update, changed or not.
// An event that says a file is complete (renamed in, closed after writing)
// scans at once; others (a create, a write in progress, a rename away, a
// removal) wait for the debounce, so a half-written file is not read and a
// file unlinked to be written again stops nothing. Only files whose size, times
// or inode changed are decoded again. When the watch cannot be set up, Run
// relies on the rescans and retries the watch on each of them.
//
// A missing path is an Update with no pods and the warning "<path> does not
// exist": a missing directory or single file therefore drops all its pods,
// as the kubelet does; the watch (on the nearest existing ancestor) scans as
// soon as the path is created, and Missing reports it meanwhile. A file that
// cannot be read or is larger than MaxManifestBytes fails its origin. When
// the directory cannot be listed for another reason, the previous scan's
// pods are sent again with the error added, or nothing is sent before a
// first good scan. A key declared by two files stays with the file that
// declared it first (declOwners); a file being written keeps its last decode
// (fileChurn).
type Source struct {
	// Debounce is how long events are collected before a scan
	// (DefaultDebounce when zero). Set it before Run.
	Debounce time.Duration

	name   string
	path   string
	rescan time.Duration
	opts   sources.Options

	// OwnersFile is where the source keeps which file declared each key
	// first, so that a restart keeps them ("" keeps them in memory only).
	// Set it before Run.
	OwnersFile string

	missing   atomic.Bool
	last      *sources.Update
	churn     *fileChurn
	owners    *declOwners
	ownersErr string
	cache     decodeCache
	warned    sources.WarnLog
	skipped   skipLog
	fileWarn  fileWarnLog
}

// New returns a file source named name for path, rescanning every
// rescan (never when rescan <= 0).
func New(name, path string, rescan time.Duration, opts sources.Options) *Source {
	opts.FileOrigin = true
	return &Source{name: name, path: filepath.Clean(path), rescan: rescan, opts: opts}
}

// Missing returns an error naming the path while the last scan found no
// file or directory there, nil otherwise. Safe for concurrent use.
func (s *Source) Missing() error {
	if s.missing.Load() {
		return fmt.Errorf("%s does not exist", s.path)
	}
	return nil
}

// Name returns the source's name.
func (s *Source) Name() string { return s.name }

// Run scans and reports until ctx ends, then returns nil. It must not be
// called more than once at a time.
func (s *Source) Run(ctx context.Context, out chan<- sources.Update) error {
	log := s.opts.Logger().With("source", s.name, "path", s.path)
	debounce := s.Debounce
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	w := &dirWatch{log: log}
	defer w.close()
	w.ensure(s.path)
	s.churn = newFileChurn(debounce)
	s.owners = newDeclOwners(s.OwnersFile, debounce)
	if err := s.owners.load(); err != nil {
		log.Warn("cannot read which files declared the pods first; the first file in name order takes each key", "err", err)
	}

	clk := s.opts.Ticker()
	var tick <-chan time.Time
	if s.rescan > 0 {
		t := clk.NewTicker(s.rescan)
		defer t.Stop()
		tick = t.C()
	}
	timer := clk.NewTimer(debounce)
	timer.Stop()
	var pending <-chan time.Time
	wake := func() {
		if pending == nil {
			timer.Reset(debounce)
			pending = timer.C()
		}
	}

	// scan reads what the watch has queued first, so that it knows of
	// every write in progress it could see, then scans and sends; a scan
	// that held a key or left a file being written asks for another.
	scan := func() bool {
		if w.drain(func(ev fileEvent) { s.see(w, ev, clk.Now(), wake) }) {
			w.close()
		}
		w.ensure(s.path)
		sent, again := s.scanAndSend(ctx, out, log)
		if again {
			wake()
		}
		return sent
	}
	if !scan() {
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
			if !scan() {
				return nil
			}
		case <-pending:
			pending = nil
			if !scan() {
				return nil
			}
		case ev, ok := <-w.events():
			if !ok {
				w.close()
				continue
			}
			// Events already queued (a burst of files) go into one scan; a
			// half-done change among them still gets its debounced scan.
			if s.see(w, ev, clk.Now(), wake) && !scan() {
				return nil
			}
		case err, ok := <-w.errors():
			if !ok {
				w.close()
				continue
			}
			log.Warn("file watch error; scanning", "err", err)
			wake()
		}
	}
}

// see records one watch event and reports whether it asks for a scan now:
// a relevant event that says a file is complete. A relevant incomplete
// one calls wake, for a scan after the debounce.
func (s *Source) see(w *dirWatch, ev fileEvent, now time.Time, wake func()) (scanNow bool) {
	if !w.relevant(ev) {
		return false
	}
	s.churn.see(ev, now)
	if !ev.complete {
		wake()
	}
	return ev.complete
}

// scanAndSend reports false when ctx ended before the update was taken,
// and again when a key was held or a file left for a later scan.
func (s *Source) scanAndSend(ctx context.Context, out chan<- sources.Update, log *slog.Logger) (sent, again bool) {
	u, again, ok := s.scan(log)
	if !ok {
		return ctx.Err() == nil, again
	}
	select {
	case out <- u:
		return true, again
	case <-ctx.Done():
		return false, false
	}
}

func (s *Source) scan(log *slog.Logger) (u sources.Update, again, ok bool) {
	now := s.opts.Ticker().Now()
	if s.churn == nil {
		s.churn = newFileChurn(DefaultDebounce)
	}
	if s.owners == nil {
		s.owners = newDeclOwners("", DefaultDebounce)
	}
	defer s.churn.scanned(now)
	files, skipped, err := sources.ListDir(s.path)
	var fileWarns []fileWarning
	missing := errors.Is(err, fs.ErrNotExist)
	if was := s.missing.Swap(missing); was && !missing {
		log.Info("manifest path created; reading it")
	}
	switch {
	case missing:
		// Like the kubelet: no path, no pods. A deleted single file thus
		// deletes its pods, as a deleted file in a directory does; a
		// directory swapped by two renames holds them in between.
		r := decoding{Update: sources.Update{Source: s.name}}
		st := s.owners.settle(&r.Update, r.facts(s.churn), now)
		s.saveOwners(log)
		if st.waiting {
			// An owner of the last run may be back with the path: no
			// first update yet (see the same below).
			return sources.Update{}, true, false
		}
		again = st.again()
		u = r.Update
		u.Warnings = []string{s.path + " does not exist; its pods start when it is created"}
	case err != nil:
		if s.last == nil {
			log.Error("cannot list manifests; not reporting until a scan succeeds", "err", err)
			return sources.Update{}, false, false
		}
		log.Error("cannot list manifests; keeping the last scan", "err", err)
		u = sources.Update{Source: s.name, Pods: s.last.Pods, Objects: s.last.Objects, Warnings: s.last.Warnings}
		u.Errors = append(slices.Clip(s.last.Errors), manifest.ManifestError{Origin: s.path, Err: err.Error()})
		return u, false, true
	default:
		r := s.cache.decodeFiles(s.name, files, s.opts.Options, func(f string) bool { return s.churn.inFlux(f, now) })
		st := s.owners.settle(&r.Update, r.facts(s.churn), now)
		s.saveOwners(log)
		if st.waiting {
			// An owner of the last run declares none of its keys yet (a
			// rewrite as berth started): read again before the first
			// update, which would stop its pods.
			return sources.Update{}, true, false
		}
		for _, w := range r.warns {
			r.Warnings = append(r.Warnings, w.msg)
		}
		for _, f := range r.empty {
			if !st.held[f] { // emptied for a rewrite, it is not said until it stays so
				r.Warnings = append(r.Warnings, sources.NothingWarning(f))
			}
		}
		u, fileWarns, again = r.Update, r.warns, r.deferred || st.again()
	}
	s.last = &u
	s.warned.Log(log, u.Pods)
	s.skipped.log(log, skipped)
	s.fileWarn.log(log, fileWarns)
	log.Debug("scanned manifests", "files", len(files), "pods", len(u.Pods), "errors", len(u.Errors))
	return u, again, true
}

// saveOwners keeps the owners for the next start, logging a failure once.
func (s *Source) saveOwners(log *slog.Logger) {
	err := s.owners.save()
	if err != nil && err.Error() != s.ownersErr {
		log.Warn("cannot keep which files declared the pods first; a restart gives each key to the first file in name order", "err", err)
	}
	s.ownersErr = ""
	if err != nil {
		s.ownersErr = err.Error()
	}
}

// dirWatch is the fsnotify watch of a Source: the directory at path, or
// the parent directory of a single (or missing) file, filtered to its name.
type dirWatch struct {
	log      *slog.Logger
	w        watcher
	dir      string // watched directory, "" when none
	resolved string // dir with symlinks resolved when it was added
	only     string // base name that events must have, "" for all
	failed   string // last setup error, logged once
}

func (w *dirWatch) events() <-chan fileEvent {
	if w.w == nil {
		return nil
	}
	return w.w.events()
}

func (w *dirWatch) errors() <-chan error {
	if w.w == nil {
		return nil
	}
	return w.w.errors()
}

// ensure watches the right directory for path, re-adding it when it was
// removed, replaced, or its symlink now points elsewhere. For a missing
// path it watches the nearest existing ancestor for the next name on the
// way down, and moves down as the names are created.
func (w *dirWatch) ensure(path string) {
	dir, only := path, ""
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		dir, only = filepath.Dir(path), filepath.Base(path)
		for {
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) || filepath.Dir(dir) == dir {
				break
			}
			dir, only = filepath.Dir(dir), filepath.Base(dir)
		}
	}
	resolved, _ := filepath.EvalSymlinks(dir)
	if w.w == nil {
		nw, err := newWatcher()
		if err != nil {
			w.setupFailed(err)
			return
		}
		w.w = nw
	}
	w.only = only
	if w.dir == dir && w.resolved == resolved && w.w.watching(dir) {
		return
	}
	if w.dir != "" {
		_ = w.w.remove(w.dir)
		w.dir = ""
	}
	if err := w.w.add(dir); err != nil {
		w.setupFailed(err)
		return
	}
	w.dir, w.resolved, w.failed = dir, resolved, ""
	w.log.Debug("watching manifests", "dir", dir)
}

func (w *dirWatch) setupFailed(err error) {
	if err.Error() != w.failed {
		w.failed = err.Error()
		w.log.Warn("cannot watch manifests; relying on rescans", "err", err)
	}
}

// relevant reports whether an event may change the scan: any event on a
// manifest name or on a "..name" of an atomic symlink swap.
func (w *dirWatch) relevant(ev fileEvent) bool {
	if ev.name == "" {
		return true // events were lost
	}
	base := filepath.Base(ev.name)
	if strings.HasPrefix(base, "..") {
		return true
	}
	if w.only != "" {
		return base == w.only
	}
	return !sources.IgnoredName(base) || filepath.Clean(ev.name) == filepath.Clean(w.dir)
}

// drain passes the events already queued to see; it reports true when the
// watch broke.
func (w *dirWatch) drain(see func(fileEvent)) (broken bool) {
	for {
		select {
		case ev, ok := <-w.events():
			if !ok {
				return true
			}
			see(ev)
		default:
			return false
		}
	}
}

func (w *dirWatch) close() {
	if w.w != nil {
		_ = w.w.close()
		w.w = nil
		w.dir = ""
	}
}

// decodeCache keeps the last decode of each file with the file's identity
// (size, modification and change times, inode), so a scan decodes only files
// that changed. A nil cache decodes everything.
type decodeCache map[string]decoded

func (c *decodeCache) get(file string) (decoded, bool) {
	if c == nil {
		return decoded{}, false
	}
	d, ok := (*c)[file]
	return d, ok
}

type decoded struct {
	id fileID
	// racy is set on a decode of a file changed within racyWindow of it:
	// its identity may not tell a later write.
	racy bool
	sources.FileDecode
}

// racyWindow is more than the granularity of file times (a kernel tick).
const racyWindow = 50 * time.Millisecond

type fileID struct {
	size         int64
	mtime, ctime int64
	ino          uint64
}

// decoding is one scan's decode of a source's files: every declaration of
// every file in name order (duplicates left to declOwners), the files' own
// warnings with their identities, the files listed and not vanished, and
// whether a file being written was left to a later scan.
type decoding struct {
	sources.Update
	warns   []fileWarning
	present map[string]bool
	// read are the present files whose declarations are in Update (not
	// those being written for the first time).
	read     map[string]bool
	empty    []string // files that declare nothing
	deferred bool
}

// decodeFiles decodes every file (skipping ones that vanished) through the
// cache. A file inFlux (nil: none) is being written: its last decode is
// used, or, new, it is left out, and the result says to scan again.
func (c *decodeCache) decodeFiles(source string, files []string, opts manifest.Options, inFlux func(string) bool) decoding {
	r := decoding{Update: sources.Update{Source: source}, present: make(map[string]bool, len(files)), read: make(map[string]bool, len(files))}
	next := decodeCache{}
	for _, f := range files {
		if inFlux != nil && inFlux(f) {
			r.deferred = true
			r.present[f] = true
			if d, ok := c.get(f); ok {
				next[f] = d
				r.use(f, d.id, d.FileDecode)
			}
			continue
		}
		id, statOK := statID(f)
		if d, ok := c.get(f); ok && statOK && !d.racy && d.id == id {
			next[f] = d
			r.present[f] = true
			r.use(f, id, d.FileDecode)
			continue
		}
		dec, read := sources.DecodeFile(source, f, opts)
		if read == sources.ReadVanished {
			continue
		}
		r.present[f] = true
		if read == sources.ReadOK {
			// The identity was read before the content: a write in between
			// changes it again, so the next scan decodes anew. A file
			// changed within racyWindow is racy: the kernel's coarse file
			// times could give a second write of the same size the same
			// identity, so only a file being written uses that decode.
			// A failed read is tried again next scan.
			racy := !statOK || time.Now().UnixNano()-id.ctime <= int64(racyWindow) // the kernel's clock, as file times are
			next[f] = decoded{id: id, racy: racy, FileDecode: dec}
		}
		r.use(f, id, dec)
	}
	if c != nil {
		*c = next
	}
	return r
}

// use adds what file declares.
func (r *decoding) use(file string, id fileID, d sources.FileDecode) {
	r.read[file] = true
	r.add(d.Decoded)
	if d.Warning != "" {
		r.warns = append(r.warns, fileWarning{file, id, d.Warning})
	}
	if sources.DeclaresNothing(d.Decoded) {
		r.empty = append(r.empty, file)
	}
}

// facts are what declOwners needs of this decoding and of what the watch
// saw since the last scan.
func (r *decoding) facts(churn *fileChurn) fileFacts {
	f := fileFacts{present: func(o string) bool { return r.present[o] }, listed: r.read, changedAt: churn.changedAt,
		renamedTo: churn.renamedTo,
		failed:    map[string]bool{}, invalid: map[string]bool{}}
	for _, e := range r.Errors {
		switch {
		case e.PodKey == "":
			f.failed[e.Origin] = true
		case e.Kind == "":
			f.invalid[e.Origin+"\x00Pod/"+e.PodKey] = true
		default:
			f.invalid[e.Origin+"\x00"+e.Kind+"/"+e.PodKey] = true
		}
	}
	return f
}

// add appends what one origin declared, and the warnings of the documents
// it skipped.
func (r *decoding) add(d manifest.Decoded) {
	r.Pods = append(r.Pods, d.Pods...)
	r.Objects = append(r.Objects, d.Objects...)
	r.Errors = append(r.Errors, d.Errors...)
	r.Warnings = append(r.Warnings, d.Warnings...)
}
