package sources

import (
	"crypto/sha256"
	"encoding/json"
	"log/slog"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/manifest"
)

// warnLog logs each pod's warning line once per spec: again only when the
// pod's origin or spec changed, or after it was gone from an update. A pod
// sent again as the same object with the same origin (pods are never
// mutated) is not walked again, so an update costs a map lookup per
// unchanged pod.
type warnLog struct {
	last map[podName]warnSeen
	gen  uint64
	// line is manifest.WarningLine when nil; tests count its calls.
	line func(manifest.Desired) string
}

// WarnLog is the warning log of a source outside this package (the file
// source): Log logs the warning lines of the pods of one complete update,
// each once per spec, as the sources here log theirs. The zero value is
// ready; not safe for concurrent use.
type WarnLog struct{ w warnLog }

// Log logs the warning lines of pods, the pods of one complete update.
func (l *WarnLog) Log(log *slog.Logger, pods []manifest.Desired) { l.w.log(log, pods) }

// podName is a pod's key without building the "ns/name" string.
type podName struct{ namespace, name string }

// warnSeen is what a pod was when last seen: the object, its origin and,
// when it had a warning, the hash of origin and spec.
type warnSeen struct {
	pod    *v1.Pod
	origin string
	warned bool
	sum    [sha256.Size]byte
	gen    uint64
}

// log logs the warning lines of the pods of one complete update.
func (w *warnLog) log(log *slog.Logger, pods []manifest.Desired) {
	w.init()
	w.gen++
	seen := 0
	for _, d := range pods {
		id := podName{d.Pod.Namespace, d.Pod.Name}
		old, ok := w.last[id]
		if !ok || old.gen != w.gen {
			seen++
		}
		if ok && old.pod == d.Pod && old.origin == d.Origin {
			old.gen = w.gen
			w.last[id] = old
			continue
		}
		w.see(log, d, id, old, ok)
	}
	if seen == len(w.last) {
		return
	}
	for id, s := range w.last {
		if s.gen != w.gen {
			delete(w.last, id)
		}
	}
}

// change is log for an update that differs from the last one logged only
// by removed (pods no longer in it) and added (pods new in it, or new
// objects): the cost is that of the change. A removed pod that is not the
// one seen under its key is ignored; one added again under its key (a
// rewrite) is logged again only if its spec or origin changed.
func (w *warnLog) change(log *slog.Logger, added, removed []manifest.Desired) {
	w.init()
	replaced := make(map[podName]bool, len(added))
	for _, d := range added {
		replaced[podName{d.Pod.Namespace, d.Pod.Name}] = true
	}
	for _, d := range removed {
		id := podName{d.Pod.Namespace, d.Pod.Name}
		if old, ok := w.last[id]; ok && old.pod == d.Pod && !replaced[id] {
			delete(w.last, id) // a pod replaced is compared with it below
		}
	}
	for _, d := range added {
		id := podName{d.Pod.Namespace, d.Pod.Name}
		old, ok := w.last[id]
		if ok && old.pod == d.Pod && old.origin == d.Origin {
			continue
		}
		w.see(log, d, id, old, ok)
	}
}

func (w *warnLog) init() {
	if w.last == nil {
		w.last = map[podName]warnSeen{}
	}
	if w.line == nil {
		w.line = manifest.WarningLine
	}
}

// see records d, a pod not seen as this object before (old, when ok, is
// what its key held), and logs its warning line unless the same was logged
// for its key.
func (w *warnLog) see(log *slog.Logger, d manifest.Desired, id podName, old warnSeen, ok bool) {
	cur := warnSeen{pod: d.Pod, origin: d.Origin, gen: w.gen}
	if text := w.line(d); text != "" {
		spec, _ := json.Marshal(d.Pod.Spec)
		cur.warned, cur.sum = true, sha256.Sum256(append([]byte(d.Origin+"\x00"), spec...))
		if !ok || !old.warned || old.sum != cur.sum {
			log.Warn(text)
		}
	}
	w.last[id] = cur
}
