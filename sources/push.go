package sources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

// MaxPushBytes is the size limit of one pushed manifest.
const MaxPushBytes = 1 << 20

// pushRetry is how long Run waits before reading the directory again after
// it could not.
var pushRetry = 5 * time.Second

// PushSource declares the pods pushed to berth's API:
//
//	POST   /pods/{ns}/{name}  create (409 when it exists)
//	PUT    /pods/{ns}/{name}  create (201) or replace (200)
//	DELETE /pods/{ns}/{name}  delete (404 when missing)
//
// and the same for /configmaps/{ns}/{name} and /secrets/{ns}/{name}, whose
// body declares one ConfigMap or Secret and whose answer lists its keys,
// never its values. Claims are written through Put and Delete only.
//
// Manifest, Put and Delete are the same operations for other front ends
// (the Kubernetes API's writes): one code path, one validation.
//
// The body (at most MaxPushBytes, else 413) may be anything Decode accepts
// that declares exactly one pod, whose namespace and name must be those of
// the URL (else 400). A body that cannot be parsed is a 400; a pod that does
// not validate (including host access without AllowHostAccess) is a 422; both
// answer with "origin: pod: field: error" lines, the origin being the request
// path. Success answers with the defaulted pod as JSON.
//
// A write that would take the source over Options.Quota is a 403 naming
// the quota, dry runs included; a write that does not grow what it
// replaces, and a delete, always pass.
//
// Accepted manifests are persisted as the one object decoded (canonical:
// the bytes charged to the quota are those held) in dir as
// <ns>_<name>.yaml (written to a temporary file, synced and renamed, then
// the directory synced), so pushed pods survive a restart of berth. The
// directory is the state, berth's own: it is read and decoded once (at the
// first scan or write), then kept decoded in memory by file, each write
// decoding its own file only, so N writes cost N decodes; a file changed
// behind berth's back is read at its next start. Run sends the full
// snapshot after every change; each pod's origin is its file. The handlers
// never wait for Run: they signal a change on a one-slot channel, so
// several quick changes may be reported as one snapshot.
type PushSource struct {
	name string
	dir  string
	opts Options

	mu sync.Mutex // serialises changes to dir and files
	// files are the decoded files of dir by path, with their quota usage;
	// nil until read.
	files   *origins
	changed chan struct{}
	gate    quotaGate // keeps a lowered quota over older files
	// apply, when set, applies the source's updates in the caller:
	// Run's first, and each write's before it returns.
	apply Applier
	// warned logs each pod's warning lines once per spec: Run's updates
	// whole, each applied write by its change. Guarded by mu.
	warned warnLog
}

// SetApplier makes the source apply its updates itself through a, in
// order under its lock, instead of sending them to Run's channel: a Put or
// Delete returns once the store holds it, with admission's verdict. Set it
// before Run starts; writes before then are sent by Run's first update.
func (s *PushSource) SetApplier(a Applier) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apply = a
}

// NewPushSource returns a push source named name persisting pods in dir.
func NewPushSource(name, dir string, opts Options) *PushSource {
	return &PushSource{name: name, dir: dir, opts: opts, changed: make(chan struct{}, 1)}
}

// Name returns the source's name.
func (s *PushSource) Name() string { return s.name }

// Run reports the persisted pods, then a new snapshot after each change,
// until ctx ends; it returns nil. It must not be called more than once at a
// time.
func (s *PushSource) Run(ctx context.Context, out chan<- Update) error {
	log := s.log()
	var retry <-chan time.Time
	for {
		u, applied := s.scanApply()
		if u.Err != nil {
			log.Error("cannot read pushed pods; keeping the last good set", "err", u.Err)
			retry = s.opts.clock().After(pushRetry)
		} else {
			retry = nil
			for _, e := range u.Errors {
				log.Warn("persisted manifest rejected", "err", e.Error())
			}
			s.mu.Lock()
			s.warned.log(log, u.Pods)
			s.mu.Unlock()
		}
		if !applied && !send(ctx, out, u) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.changed:
		case <-retry:
		}
	}
}

// log is the source's logger.
func (s *PushSource) log() *slog.Logger { return s.opts.logger().With("source", s.name, "dir", s.dir) }

// scanApply is the snapshot of the pushed files, within the quota,
// applied through the applier when there is one (applied true; an
// applier's error is the update's Err).
func (s *PushSource) scanApply() (u Update, applied bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(); err != nil {
		return Update{Source: s.name, Err: err}, false
	}
	u = s.snapshotLocked()
	s.files.takeChanges() // Run logs warnings from the whole update
	if s.apply == nil {
		return u, false
	}
	if _, err := s.apply(u); err != nil {
		u.Err = err
	}
	return u, true
}

// snapshotLocked is the source's update now: its files within the quota;
// s.mu is held and the files loaded.
func (s *PushSource) snapshotLocked() Update {
	u := s.files.snapshot(s.name)
	// Put counted the pods still terminating; the gate does not: a scan
	// runs only after a change, so a pod Put accepted and the gate left
	// out would wait for another write once they are gone.
	q := s.opts.Quota
	q.Held = nil
	return s.gate.admitBounded(s.name, q, u, s.files.sizeOf, s.files.used)
}

// applyLocked applies the source's update after a write, through the applier
// (returning what it refused), or signals Run to send it; s.mu is held.
func (s *PushSource) applyLocked() (Applied, error) {
	if s.apply == nil {
		s.notify()
		return Applied{}, nil
	}
	added, dropped := s.files.takeChanges()
	s.warned.change(s.log(), added, dropped)
	a, err := s.apply(s.snapshotLocked())
	if err != nil {
		// The write is persisted: Run applies the whole set again, and
		// retries while it fails.
		s.notify()
	}
	return a, err
}

// load reads and decodes every file of dir unless that was done; s.mu is
// held.
func (s *PushSource) load() error {
	if s.files != nil {
		return nil
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("push: %w", err)
	}
	paths, err := listManifests(s.dir)
	if err != nil {
		return fmt.Errorf("push: %w", err)
	}
	files := newOrigins()
	for _, f := range paths {
		data, _, err := readManifest(f)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			files.set(f, &originEntry{decoded: manifest.Decoded{Errors: []manifest.ManifestError{{Origin: f, Err: err.Error()}}}})
		default:
			files.set(f, s.decodeFile(f, data))
		}
	}
	s.files = files
	return nil
}

// decodeFile decodes data, the content of file, as a scan of dir would.
func (s *PushSource) decodeFile(file string, data []byte) *originEntry {
	return &originEntry{size: int64(len(data)), decoded: manifest.DecodeAll(s.name, file, data, s.opts.Options)}
}

// Routes returns the push handlers keyed by their http.ServeMux patterns.
func (s *PushSource) Routes() map[string]http.Handler {
	routes := map[string]http.Handler{}
	for _, k := range pushKinds {
		if k.apiOnly {
			continue
		}
		routes["POST /"+k.path+"/{ns}/{name}"] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.put(w, r, k, false) })
		routes["PUT /"+k.path+"/{ns}/{name}"] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.put(w, r, k, true) })
		routes["DELETE /"+k.path+"/{ns}/{name}"] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.remove(w, r, k) })
	}
	return routes
}

// pushKind is one kind of object the push API takes.
type pushKind struct {
	kind string // "Pod", model.KindConfigMap, model.KindSecret, model.KindPVC
	path string // the URL's first element
	// suffix of the persisted file, after <ns>_<name>; an object's starts
	// with "_", which no pod name has, so no pod's file is an object's.
	suffix string
	word   string // in messages
	// apiOnly kinds are written through the Kubernetes API only: berth's
	// own API has their path (/persistentvolumeclaims deletes claims'
	// data).
	apiOnly bool
}

// ref is how an Applied names ns/name of k: the pod key, or the object's
// ref (model.ObjectRef).
func (k pushKind) ref(ns, name string) string {
	if k.kind == "Pod" {
		return ns + "/" + name
	}
	return model.ObjectRef(k.kind, ns+"/"+name)
}

var pushKinds = []pushKind{
	{kind: "Pod", path: "pods", suffix: ".yaml", word: "pod"},
	{kind: model.KindConfigMap, path: "configmaps", suffix: "_configmap.yaml", word: "configmap"},
	{kind: model.KindSecret, path: "secrets", suffix: "_secret.yaml", word: "secret"},
	{kind: model.KindPVC, path: "persistentvolumeclaims", suffix: "_pvc.yaml", word: "persistentvolumeclaim", apiOnly: true},
}

// Handler returns a ServeMux serving Routes.
func (s *PushSource) Handler() http.Handler {
	mux := http.NewServeMux()
	for p, h := range s.Routes() {
		mux.Handle(p, h)
	}
	return mux
}

func (s *PushSource) notify() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *PushSource) file(k pushKind, ns, name string) string {
	return filepath.Join(s.dir, ns+"_"+name+k.suffix)
}

// target checks the {ns}/{name} of the request; it writes a 400 and
// returns false when they cannot name a pod.
func target(w http.ResponseWriter, r *http.Request) (ns, name string, ok bool) {
	ns, name = r.PathValue("ns"), r.PathValue("name")
	if _, err := kindOf("Pod", ns, name); err != nil {
		writePushError(w, err)
		return "", "", false
	}
	return ns, name, true
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// readBody reads the body; it writes the error response and returns ok
// false when it cannot.
func readBody(w http.ResponseWriter, r *http.Request) (data []byte, ok bool) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxPushBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("body is larger than %d MiB", MaxPushBytes>>20), http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, "reading body: "+err.Error(), http.StatusBadRequest)
		}
		return nil, false
	}
	return data, true
}

// answerOf is what the push API answers: the pod, or an object's kind,
// name and keys (never a Secret's values).
func answerOf(obj runtime.Object) any {
	out := map[string]any{"apiVersion": "v1"}
	var keys []string
	switch o := obj.(type) {
	case *v1.ConfigMap:
		out["kind"] = model.KindConfigMap
		out["metadata"] = map[string]string{"namespace": o.Namespace, "name": o.Name}
		for k := range o.Data {
			keys = append(keys, k)
		}
		for k := range o.BinaryData {
			keys = append(keys, k)
		}
	case *v1.Secret:
		out["kind"] = model.KindSecret
		out["metadata"] = map[string]string{"namespace": o.Namespace, "name": o.Name}
		out["type"] = o.Type
		for k := range o.Data {
			keys = append(keys, k)
		}
	default:
		return obj
	}
	slices.Sort(keys)
	out["keys"] = keys
	return out
}

// writePushError answers err as the push routes always did: its status
// and plain-text message.
func writePushError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var pe *PushError
	if errors.As(err, &pe) {
		code = pe.Code
	}
	http.Error(w, err.Error(), code)
}

func (s *PushSource) put(w http.ResponseWriter, r *http.Request, k pushKind, replace bool) {
	ns, name, ok := target(w, r)
	if !ok {
		return
	}
	data, ok := readBody(w, r)
	if !ok {
		return
	}
	res, err := s.Put(k.kind, ns, name, data, PutOptions{Replace: replace})
	if err != nil {
		writePushError(w, err)
		return
	}
	code := http.StatusOK
	if res.Created {
		code = http.StatusCreated
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(answerOf(res.Object))
}

func (s *PushSource) remove(w http.ResponseWriter, r *http.Request, k pushKind) {
	ns, name, ok := target(w, r)
	if !ok {
		return
	}
	if err := s.Delete(k.kind, ns, name, false); err != nil {
		writePushError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "deleted", k.word: ns + "/" + name})
}

// writeFileAtomic replaces file (in dir) with data: a temporary file in dir
// is written, synced and renamed over file, then dir is synced.
func writeFileAtomic(dir, file string, data []byte) (err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".push-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err = f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	if err = os.Rename(tmp, file); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename or removal in dir durable, best effort.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
