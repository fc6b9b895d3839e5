// Package projected keeps pods' projected volumes (configMap, secret,
// downwardAPI, projected) written under root_dir through podfs. It
// remembers what it last wrote of each volume, by pod UID, so that a pod
// whose objects did not change costs one digest per volume and no
// filesystem call, and which pod keys wrote under which UIDs, so that
// their files go with the pod even when it never had a container.
package projected

import (
	"fmt"
	"log/slog"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/podfs"
)

// Writer writes projected volumes and remembers what it wrote. Safe for
// concurrent use, though one pod's volumes must be synced by one caller at
// a time (the controller's per-key queue).
type Writer struct {
	paths podfs.Root
	// maxBytes bounds the payload of one pod's projected volumes together.
	maxBytes int64
	log      *slog.Logger

	mu      sync.Mutex
	written map[string]map[string]string // uid → volume → payload digest
	uids    map[string]map[string]bool   // pod key → uids written
}

// New returns a writer under paths that refuses a pod's volumes past
// maxBytes of payload together.
func New(paths podfs.Root, maxBytes int64, log *slog.Logger) *Writer {
	return &Writer{paths: paths, maxBytes: maxBytes, log: log,
		written: map[string]map[string]string{}, uids: map[string]map[string]bool{}}
}

// Sync writes each of vols, the projected volumes of pod key's incarnation
// uid, whose payload (built by build) changed since it was last written,
// and returns the volumes that cannot be written now (a missing object, a
// failed write, the pod's payload past the bound) with the reason, or nil.
// The containers mounting those wait; the others go on.
func (w *Writer) Sync(key, uid string, vols []*v1.Volume, build func(*v1.Volume) (podfs.Projection, error)) map[string]error {
	var failed map[string]error
	fail := func(volume string, err error) {
		if failed == nil {
			failed = map[string]error{}
		}
		failed[volume] = err
	}
	var total int64
	for _, v := range vols {
		pr, err := build(v)
		if err != nil {
			fail(v.Name, err)
			continue
		}
		if total += payloadBytes(pr); total > w.maxBytes {
			fail(v.Name, fmt.Errorf("projected volume %q: the pod's projected volumes hold more than %d MiB", v.Name, w.maxBytes>>20))
			continue
		}
		d := digest(pr)
		if w.current(uid, v.Name, d) {
			continue
		}
		wrote, err := w.paths.WriteProjection(pr)
		if err != nil {
			w.log.Warn("writing projected volume failed", "pod", key, "volume", v.Name, "err", err)
			fail(v.Name, err)
			continue
		}
		w.record(key, uid, v.Name, d)
		if wrote {
			w.log.Debug("projected volume written", "pod", key, "volume", v.Name, "files", len(pr.Files))
		}
	}
	return failed
}

// RemoveStale removes the pod directories of UIDs key wrote projected
// volumes under, other than keep, that inUse says no desired pod nor any
// container has any more: a pod deleted (or replaced by a new incarnation)
// before any of its containers existed leaves no Secret behind.
func (w *Writer) RemoveStale(key, keep string, inUse func(uid string) bool) {
	for _, uid := range w.others(key, keep) {
		if inUse(uid) {
			continue // the pod's removal takes it with its containers
		}
		if err := w.paths.RemovePod(uid); err != nil {
			w.log.Warn("removing pod directory failed", "uid", uid, "err", err)
			continue
		}
		w.Forget(uid)
	}
}

// Forget drops what was written under uid, whose directory is gone.
func (w *Writer) Forget(uid string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.written, uid)
	for key, set := range w.uids {
		delete(set, uid)
		if len(set) == 0 {
			delete(w.uids, key)
		}
	}
}

func (w *Writer) current(uid, volume, digest string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written[uid][volume] == digest
}

func (w *Writer) record(key, uid, volume, digest string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.written[uid] == nil {
		w.written[uid] = map[string]string{}
	}
	w.written[uid][volume] = digest
	if w.uids[key] == nil {
		w.uids[key] = map[string]bool{}
	}
	w.uids[key][uid] = true
}

// others returns the UIDs key wrote under other than keep.
func (w *Writer) others(key, keep string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for uid := range w.uids[key] {
		if uid != keep {
			out = append(out, uid)
		}
	}
	sort.Strings(out)
	return out
}

func payloadBytes(pr podfs.Projection) int64 {
	var n int64
	for _, f := range pr.Files {
		n += int64(len(f.Data))
	}
	return n
}
