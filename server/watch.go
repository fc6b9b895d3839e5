package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/kubeapi"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podview"
	"github.com/berth-dev/berth/store"
)

// WatchEvent is one line of GET /pods?watch=1: a pod as it now is, or as it
// last was for DELETED (with metadata.deletionTimestamp set to when the
// watch saw it gone).
type WatchEvent struct {
	Type   string `json:"type"`
	Object v1.Pod `json:"object"`
}

// watchInterval is the least time between two reads of one watch: changes
// within it of the last are coalesced, so a busy pod costs a watcher at
// most ten renders a second, and a quiet store shows a change at once.
const watchInterval = 100 * time.Millisecond

// serveWatch answers a ?watch=1 request to GET /pods and reports whether it
// did (false: a plain list is wanted).
func (s *Server) serveWatch(w http.ResponseWriter, r *http.Request) bool {
	watch, err := boolParam(r, "watch")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return true
	}
	if !watch {
		return false
	}
	s.watchPods(w, r)
	return true
}

// watchPods streams newline-delimited WatchEvents: ADDED for every current
// pod (then, if ?sendInitialEvents=true, a BOOKMARK: a Pod with only the
// annotation kubeapi.InitialEventsEnd = "true"), then one event per pod the
// store wrote since (DELETED, then ADDED, when another pod, by UID or
// source, takes a key), read from the store's changes: the work of a wake
// is that of the pods changed. It ends when the client leaves, or when the
// store no longer holds the changes since its last read (the client
// relists). Only pods the request may see are ever sent.
func (s *Server) watchPods(w http.ResponseWriter, r *http.Request) {
	bookmark, err := boolParam(r, "sendInitialEvents")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	rc := http.NewResponseController(w)
	// No deadline to lift: net/http clears ReadTimeout's once the request
	// is read, and its background read still sees the client leave.
	sent := map[string]bool{}
	var last uint64
	for first := true; ; first = false {
		rendered := s.opts.Clock.Now()
		ws := memdb.NewWatchSet()
		snap := s.opts.Store.Snapshot()
		snap.Watch(ws, store.TablePods)
		var out bytes.Buffer
		if first {
			pods, err := snap.Pods(nil)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			for _, p := range pods {
				if !s.visible(r, p) {
					continue
				}
				if !s.writePod(&out, kubeapi.WatchAdded, p, nil) {
					return
				}
				sent[p.Key] = true
			}
			if bookmark {
				raw, _ := json.Marshal(v1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
					ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{kubeapi.InitialEventsEnd: "true"}}})
				writeWatchEvent(&out, kubeapi.WatchBookmark, raw)
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusOK)
		} else {
			changes, err := snap.Changes(last, store.TablePods)
			if err != nil {
				return
			}
			for _, c := range changes {
				if d := c.Deleted; d != nil {
					if sent[c.Key] && !s.writePod(&out, kubeapi.WatchDeleted, d.Last.(*model.Pod), &d.At) {
						return
					}
					delete(sent, c.Key)
					continue
				}
				p := c.Row.(*model.Pod)
				if !s.visible(r, p) {
					continue
				}
				typ := kubeapi.WatchAdded
				if sent[c.Key] {
					typ = kubeapi.WatchModified
				}
				if !s.writePod(&out, typ, p, nil) {
					return
				}
				sent[c.Key] = true
			}
		}
		last = snap.Index()
		if out.Len() > 0 || first {
			if _, err := w.Write(out.Bytes()); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
		if err := ws.WatchCtx(ctx); err != nil {
			return
		}
		if wait := rendered.Add(watchInterval).Sub(s.opts.Clock.Now()); wait > 0 {
			t := s.opts.Clock.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C():
			}
		}
	}
}

// writePod writes the event typ of p, stamped with deletionTimestamp gone
// when set (the time the store removed it); false if it cannot be
// encoded.
func (s *Server) writePod(buf *bytes.Buffer, typ string, p *model.Pod, gone *time.Time) bool {
	obj := podview.Pod(p, s.opts.Node)
	if gone != nil {
		obj.DeletionTimestamp = &metav1.Time{Time: *gone}
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return false
	}
	writeWatchEvent(buf, typ, raw)
	return true
}

func writeWatchEvent(buf *bytes.Buffer, typ string, obj []byte) {
	fmt.Fprintf(buf, `{"type":%q,"object":`, typ)
	buf.Write(obj)
	buf.WriteString("}\n")
}
