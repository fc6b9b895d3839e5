package kubeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/kubeapi/registry"
)

// bookmarkInterval is how often a watch that allows bookmarks gets one.
const bookmarkInterval = time.Minute

// watchRequest is the parsed query of a watch.
type watchRequest struct {
	initial   bool // sendInitialEvents=true: ADDED for each object, then the initial-events-end bookmark
	from      uint64
	fromSet   bool // resourceVersion given and not "0": resume after it
	bookmarks bool
	timeout   time.Duration
}

func parseWatch(r *http.Request) (watchRequest, error) {
	q := r.URL.Query()
	var wr watchRequest
	var err error
	if s := q.Get("sendInitialEvents"); s != "" {
		if wr.initial, err = strconv.ParseBool(s); err != nil {
			return wr, apierrors.NewBadRequest("sendInitialEvents: " + err.Error())
		}
		if wr.initial && q.Get("resourceVersionMatch") != string(metav1.ResourceVersionMatchNotOlderThan) {
			return wr, apierrors.NewBadRequest("sendInitialEvents=true requires resourceVersionMatch=NotOlderThan")
		}
	}
	if s := q.Get("resourceVersion"); s != "" && s != "0" && !wr.initial {
		if wr.from, err = strconv.ParseUint(s, 10, 64); err != nil {
			return wr, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q", s))
		}
		wr.fromSet = true
	}
	if s := q.Get("allowWatchBookmarks"); s != "" {
		wr.bookmarks, _ = strconv.ParseBool(s)
	}
	if s := q.Get("timeoutSeconds"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return wr, apierrors.NewBadRequest(fmt.Sprintf("invalid timeoutSeconds %q", s))
		}
		wr.timeout = time.Duration(n) * time.Second
	}
	return wr, nil
}

// watchStream writes the events of one watch, as JSON lines or as Tables.
type watchStream struct {
	a       *API
	r       *http.Request
	res     *registry.Kind
	m       *matcher
	table   string // the Table apiVersion, "" for objects
	headers bool   // the next Table still needs its column definitions
	buf     bytes.Buffer
	// sent holds, by key, the last state sent of each object the watcher
	// now sees; known marks the keys whose state sent accounts for (all,
	// once the initial events went; on a resumed watch, the keys of the
	// events since).
	sent  map[string]*registry.Entry
	known map[string]bool
	all   bool
}

// serveWatch streams the watch events of res that m selects: the current
// objects as ADDED (or the changes since ?resourceVersion=, 410 Gone when
// those are no longer all known), then every change as it is committed to
// the store (kinds outside it are polled), until the client leaves or
// ?timeoutSeconds= passes.
func (a *API) serveWatch(w http.ResponseWriter, r *http.Request, res *registry.Kind, m *matcher) {
	wr, err := parseWatch(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	ctx := r.Context()
	s := &watchStream{a: a, r: r, res: res, m: m, headers: true, sent: map[string]*registry.Entry{}, known: map[string]bool{}}
	s.table, _ = tableVersion(r)
	ws := memdb.NewWatchSet()
	var last uint64
	if wr.fromSet {
		changes, rev, err := res.Versions.Since(ctx, ws, wr.from)
		if errors.Is(err, registry.ErrGone) {
			WriteError(w, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", wr.from, a.currentRevision())))
			return
		}
		if err != nil {
			WriteError(w, err)
			return
		}
		if err := s.changes(changes); err != nil {
			WriteError(w, err)
			return
		}
		last = rev
	} else {
		entries, rev, err := res.Versions.List(ctx, ws)
		if err != nil {
			WriteError(w, err)
			return
		}
		s.all = true
		for _, e := range entries {
			if m.match(e) {
				s.sent[e.Key] = e
				if err := s.event(WatchAdded, e); err != nil {
					WriteError(w, err)
					return
				}
			}
		}
		if wr.initial {
			s.bookmark(rev, true)
		}
		last = rev
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if !s.flush(w, rc) {
		return
	}
	clk := a.o.Clock
	var timeout <-chan time.Time
	if wr.timeout > 0 {
		t := clk.NewTimer(wr.timeout)
		defer t.Stop()
		timeout = t.C()
	}
	var bookmarks <-chan time.Time
	var bookmarkTimer clock.Timer
	if wr.bookmarks {
		bookmarkTimer = clk.NewTimer(bookmarkInterval)
		defer func() { bookmarkTimer.Stop() }()
		bookmarks = bookmarkTimer.C()
	}
	stopWatch := func() {}
	defer func() { stopWatch() }()
	arm := func(ws memdb.WatchSet) <-chan error {
		stopWatch()
		wctx, cancel := context.WithCancel(ctx)
		stopWatch = cancel
		return ws.WatchCh(wctx)
	}
	changed := arm(ws)
	for {
		var polled <-chan time.Time
		var poll clock.Timer
		if res.Poll > 0 {
			poll = clk.NewTimer(res.Poll)
			polled = poll.C()
		}
		woke, mark := false, false
		select {
		case <-ctx.Done():
		case <-timeout:
		case <-bookmarks:
			woke, mark = true, true
		case <-changed:
			woke = true
		case <-polled:
			woke = true
		}
		if poll != nil {
			poll.Stop()
		}
		if ctx.Err() != nil || !woke {
			return
		}
		var next memdb.WatchSet // nil: the watched set is not changed under its watcher
		if !mark {
			ws = memdb.NewWatchSet()
			next = ws
		}
		changes, rev, err := res.Versions.Since(ctx, next, last)
		if err != nil {
			return // registry.ErrGone: the client resumes from its last version and gets 410
		}
		if !mark {
			changed = arm(ws)
		}
		if err := s.changes(changes); err != nil {
			return
		}
		last = rev
		if mark {
			s.bookmark(last, false)
			bookmarkTimer = clk.NewTimer(bookmarkInterval)
			bookmarks = bookmarkTimer.C()
		}
		if !s.flush(w, rc) {
			return
		}
	}
}

// changes writes the events of changes as m sees them: an object that starts matching is ADDED, one that stops is DELETED
// with its last state that matched, at the change's revision (as the
// apiserver's watch cache sends it): an event never carries a state the
// watcher may not see.
func (s *watchStream) changes(changes []registry.Change) error {
	for _, c := range changes {
		prev := s.sent[c.Key()]
		was := prev != nil
		if !was && !s.all && !s.known[c.Key()] {
			// A resumed watch: the client had the object at its version
			// if it existed then and matched.
			if old := c.Prior(); old != nil && s.m.match(old) {
				was, prev = true, old
			}
		}
		if !s.all {
			s.known[c.Key()] = true
		}
		if c.Type == WatchDeleted {
			delete(s.sent, c.Key())
			delete(s.known, c.Key()) // a later object at the key comes ADDED
			if !was {
				continue
			}
			e := c.Cur
			if !s.m.match(e) {
				e = prev.At(c.RV) // what the watcher last saw
			}
			if err := s.event(WatchDeleted, e); err != nil {
				return err
			}
			continue
		}
		is := s.m.match(c.Cur)
		typ := ""
		switch {
		case was && is && prev.Obj.GetUID() != c.Cur.Obj.GetUID():
			// Another object took the key: the one sent went first.
			if err := s.event(WatchDeleted, prev.At(c.RV)); err != nil {
				return err
			}
			typ = WatchAdded
		case was && is:
			typ = WatchModified
		case is:
			typ = WatchAdded
		case was:
			if err := s.event(WatchDeleted, prev.At(c.RV)); err != nil {
				return err
			}
		}
		if is {
			s.sent[c.Key()] = c.Cur
		} else {
			delete(s.sent, c.Key())
		}
		if typ == "" {
			continue
		}
		if err := s.event(typ, c.Cur); err != nil {
			return err
		}
	}
	return nil
}

func (s *watchStream) event(typ string, e *registry.Entry) error {
	var obj any = e.Obj
	if s.table != "" {
		t, err := s.a.table(s.r, s.res, []*registry.Entry{e}, s.headers)
		if err != nil {
			return err
		}
		t.APIVersion, t.ResourceVersion = s.table, e.Obj.GetResourceVersion()
		s.headers = false
		obj = t
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	s.write(typ, raw)
	return nil
}

// bookmark writes a BOOKMARK at rev: an object of the kind with only its
// resourceVersion (and the initial-events-end annotation when end).
func (s *watchStream) bookmark(rev uint64, end bool) {
	meta := metav1.ObjectMeta{ResourceVersion: strconv.FormatUint(rev, 10)}
	if end {
		meta.Annotations = map[string]string{InitialEventsEnd: "true"}
	}
	raw, _ := json.Marshal(struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ObjectMeta `json:"metadata"`
	}{metav1.TypeMeta{APIVersion: s.res.APIVersion, Kind: s.res.Kind}, meta})
	s.write(WatchBookmark, raw)
}

func (s *watchStream) write(typ string, obj []byte) {
	fmt.Fprintf(&s.buf, `{"type":%q,"object":`, typ)
	s.buf.Write(obj)
	s.buf.WriteString("}\n")
}

// flush sends what is buffered; false when the client is gone.
func (s *watchStream) flush(w http.ResponseWriter, rc *http.ResponseController) bool {
	if s.buf.Len() > 0 {
		if _, err := w.Write(s.buf.Bytes()); err != nil {
			return false
		}
		s.buf.Reset()
	}
	return rc.Flush() == nil
}
