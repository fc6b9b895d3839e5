package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/kubeapi"
)

// WatchEvent is one line of GET /pods?watch=1: a pod as it now is, or as it
// last was for DELETED (with metadata.deletionTimestamp set to when the
// watch saw it gone).
type WatchEvent struct {
	Type   string `json:"type"`
	Object v1.Pod `json:"object"`
}

// watchInterval is the least time between two diffs of one watch: changes
// within it of the last are coalesced, so a busy store costs a watcher at
// most ten renders a second, and a quiet one sees a change at once.
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

// watched is a pod as last sent to a watcher.
type watched struct {
	obj v1.Pod
	raw []byte
}

// watchPods streams newline-delimited WatchEvents: ADDED for every current
// pod (then, if ?sendInitialEvents=true, a BOOKMARK: a Pod with only the
// annotation kubeapi.InitialEventsEnd = "true"), then one event per pod
// whose rendering changed (DELETED, then ADDED, when another pod, by UID
// or source, takes a key), until the client leaves (or the store fails,
// which ends the stream). Only pods the request may see are ever sent.
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
	prev := map[string]watched{}
	for first := true; ; first = false {
		rendered := s.opts.Clock.Now()
		ws := memdb.NewWatchSet()
		pods, err := s.opts.Store.Pods(ws)
		if err != nil {
			if first {
				http.Error(w, err.Error(), http.StatusInternalServerError)
			}
			return
		}
		cur := make(map[string]watched, len(pods))
		var out bytes.Buffer
		for _, p := range pods {
			if !s.visible(r, p) {
				continue
			}
			obj := PodObject(p, s.opts.Node)
			raw, err := json.Marshal(obj)
			if err != nil {
				return
			}
			cur[p.Key] = watched{obj: obj, raw: raw}
			old, seen := prev[p.Key]
			if seen && (old.obj.UID != obj.UID || old.obj.Annotations[kubeapi.SourceAnnotation] != p.Source) {
				// Another pod took the key: the one sent is deleted.
				if !s.writeGone(&out, old) {
					return
				}
				seen = false
			}
			switch {
			case !seen:
				writeWatchEvent(&out, kubeapi.WatchAdded, raw)
			case !bytes.Equal(old.raw, raw):
				writeWatchEvent(&out, kubeapi.WatchModified, raw)
			}
		}
		for _, p := range slices.Sorted(maps.Keys(prev)) {
			if _, ok := cur[p]; ok {
				continue
			}
			if !s.writeGone(&out, prev[p]) {
				return
			}
		}
		prev = cur
		if first {
			if bookmark {
				raw, _ := json.Marshal(v1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
					ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{kubeapi.InitialEventsEnd: "true"}}})
				writeWatchEvent(&out, kubeapi.WatchBookmark, raw)
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusOK)
		}
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

// writeGone writes the DELETED event of a pod last sent as w: that state,
// stamped with the time the watch saw it gone; false if it cannot be
// encoded.
func (s *Server) writeGone(buf *bytes.Buffer, w watched) bool {
	gone := w.obj
	gone.DeletionTimestamp = &metav1.Time{Time: s.opts.Clock.Now()}
	raw, err := json.Marshal(gone)
	if err != nil {
		return false
	}
	writeWatchEvent(buf, kubeapi.WatchDeleted, raw)
	return true
}

func writeWatchEvent(buf *bytes.Buffer, typ string, obj []byte) {
	fmt.Fprintf(buf, `{"type":%q,"object":`, typ)
	buf.Write(obj)
	buf.WriteString("}\n")
}
