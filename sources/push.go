package sources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/manifest"
	"k8s.io/apimachinery/pkg/util/validation"
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
// The body (at most MaxPushBytes, else 413) may be anything Decode accepts
// that declares exactly one pod, whose namespace and name must be those of
// the URL (else 400). A body that cannot be parsed is a 400; a pod that does
// not validate (including host access without AllowHostAccess) is a 422; both
// answer with "origin: pod: field: error" lines, the origin being the request
// path. Success answers with the defaulted pod as JSON.
//
// Accepted manifests are persisted, as received, in dir as
// <ns>_<name>.yaml (written to a temporary file, synced and renamed, then
// the directory synced), so pushed pods survive a restart of berth. The
// directory is the state: Run reads it at start and after every change and
// sends the full snapshot; each pod's origin is its file. The handlers never
// wait for Run: they signal a change on a one-slot channel, so several quick
// changes may be reported as one snapshot.
type PushSource struct {
	name string
	dir  string
	opts Options

	mu      sync.Mutex // serialises changes to dir
	changed chan struct{}
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
	log := s.opts.logger().With("source", s.name, "dir", s.dir)
	var retry <-chan time.Time
	var warned warnLog
	for {
		u := s.scan()
		if u.Err != nil {
			log.Error("cannot read pushed pods; keeping the last good set", "err", u.Err)
			retry = s.opts.clock().After(pushRetry)
		} else {
			retry = nil
			for _, e := range u.Errors {
				log.Warn("persisted manifest rejected", "err", e.Error())
			}
			warned.log(log, u.Pods)
		}
		if !send(ctx, out, u) {
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

func (s *PushSource) scan() Update {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return Update{Source: s.name, Err: fmt.Errorf("push: %w", err)}
	}
	files, err := listManifests(s.dir)
	if err != nil {
		return Update{Source: s.name, Err: fmt.Errorf("push: %w", err)}
	}
	return decodeFiles(s.name, files, s.opts.Options)
}

// Routes returns the push handlers keyed by their http.ServeMux patterns.
func (s *PushSource) Routes() map[string]http.Handler {
	return map[string]http.Handler{
		"POST /pods/{ns}/{name}":   http.HandlerFunc(s.create),
		"PUT /pods/{ns}/{name}":    http.HandlerFunc(s.replace),
		"DELETE /pods/{ns}/{name}": http.HandlerFunc(s.remove),
	}
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

func (s *PushSource) file(ns, name string) string {
	return filepath.Join(s.dir, ns+"_"+name+".yaml")
}

// target checks the {ns}/{name} of the request; it writes a 400 and
// returns false when they cannot name a pod.
func target(w http.ResponseWriter, r *http.Request) (ns, name string, ok bool) {
	ns, name = r.PathValue("ns"), r.PathValue("name")
	var problems []string
	for _, m := range validation.IsDNS1123Label(ns) {
		problems = append(problems, "namespace "+quote(ns)+": "+m)
	}
	for _, m := range validation.IsDNS1123Subdomain(name) {
		problems = append(problems, "name "+quote(name)+": "+m)
	}
	if len(problems) > 0 {
		http.Error(w, strings.Join(problems, "\n"), http.StatusBadRequest)
		return "", "", false
	}
	return ns, name, true
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// readPod reads and decodes the body; it writes the error response and
// returns ok false when the body does not declare the pod ns/name.
func (s *PushSource) readPod(w http.ResponseWriter, r *http.Request, ns, name string) (data []byte, d manifest.Desired, ok bool) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxPushBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("body is larger than %d MiB", MaxPushBytes>>20), http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, "reading body: "+err.Error(), http.StatusBadRequest)
		}
		return nil, manifest.Desired{}, false
	}
	origin := r.URL.Path
	pods, errs := manifest.Decode(s.name, origin, data, s.opts.Options)
	if len(errs) > 0 {
		code := http.StatusUnprocessableEntity
		lines := make([]string, len(errs))
		for i, e := range errs {
			lines[i] = e.Error()
			if e.PodKey == "" {
				code = http.StatusBadRequest // not even a pod
			}
		}
		http.Error(w, strings.Join(lines, "\n"), code)
		return nil, manifest.Desired{}, false
	}
	switch {
	case len(pods) == 0:
		http.Error(w, origin+": body declares no pod", http.StatusBadRequest)
		return nil, manifest.Desired{}, false
	case len(pods) > 1:
		http.Error(w, fmt.Sprintf("%s: body declares %d pods, want exactly one", origin, len(pods)), http.StatusBadRequest)
		return nil, manifest.Desired{}, false
	}
	p := pods[0].Pod
	if p.Namespace != ns || p.Name != name {
		http.Error(w, fmt.Sprintf("%s: pod %s/%s in the body does not match %s/%s in the URL", origin, p.Namespace, p.Name, ns, name), http.StatusBadRequest)
		return nil, manifest.Desired{}, false
	}
	return data, pods[0], true
}

func (s *PushSource) create(w http.ResponseWriter, r *http.Request) { s.put(w, r, false) }

func (s *PushSource) replace(w http.ResponseWriter, r *http.Request) { s.put(w, r, true) }

func (s *PushSource) put(w http.ResponseWriter, r *http.Request, replace bool) {
	ns, name, ok := target(w, r)
	if !ok {
		return
	}
	data, d, ok := s.readPod(w, r, ns, name)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	file := s.file(ns, name)
	_, err := os.Stat(file)
	exists := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		http.Error(w, "push: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if exists && !replace {
		http.Error(w, fmt.Sprintf("pod %s/%s already exists; use PUT to replace it", ns, name), http.StatusConflict)
		return
	}
	if err := writeFileAtomic(s.dir, file, data); err != nil {
		s.opts.logger().Error("cannot persist pushed pod", "source", s.name, "pod", ns+"/"+name, "err", err)
		http.Error(w, "push: persisting pod: "+err.Error(), http.StatusInternalServerError)
		return
	}
	s.notify()
	code := http.StatusCreated
	if exists {
		code = http.StatusOK
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(d.Pod)
}

func (s *PushSource) remove(w http.ResponseWriter, r *http.Request) {
	ns, name, ok := target(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	file := s.file(ns, name)
	if err := os.Remove(file); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			http.Error(w, fmt.Sprintf("pod %s/%s not found", ns, name), http.StatusNotFound)
			return
		}
		http.Error(w, "push: "+err.Error(), http.StatusInternalServerError)
		return
	}
	syncDir(s.dir)
	s.notify()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "deleted", "pod": ns + "/" + name})
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
