package testutil

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Registry is a minimal Docker registry (distribution API v2, schema 2
// manifests, one layer per image) on a loopback port, which the engine
// pulls from without TLS (127.0.0.0/8 is an insecure registry by default).
// It is for tests of real pulls where no registry is reachable.
type Registry struct {
	srv *httptest.Server

	mu        sync.Mutex
	manifests map[string][]byte // "name:tag" -> manifest
	blobs     map[string][]byte // digest -> content
	// bytesPerSec throttles blob downloads (0: full speed).
	bytesPerSec int
	blobGets    int
	// user and pass, when set, are required by Basic auth on every request.
	user, pass string
}

// NewRegistry starts a registry, closed at the end of the test.
func NewRegistry(tb testing.TB) *Registry {
	tb.Helper()
	r := &Registry{manifests: map[string][]byte{}, blobs: map[string][]byte{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	r.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(r.serve)}}
	r.srv.Start()
	tb.Cleanup(r.srv.Close)
	return r
}

// RequireAuth makes every request need Basic auth with user and pass, as
// a private registry: a pull without the login is refused (401).
func (r *Registry) RequireAuth(user, pass string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.user, r.pass = user, pass
}

// Host is the registry's "127.0.0.1:port", the prefix of its image names.
func (r *Registry) Host() string { return strings.TrimPrefix(r.srv.URL, "http://") }

// Throttle makes blob downloads send about n bytes per second.
func (r *Registry) Throttle(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bytesPerSec = n
}

// BlobGets counts blob downloads served.
func (r *Registry) BlobGets() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.blobGets
}

// AddImage publishes name:tag with one layer holding files (path ->
// content, mode 0755) and the given entrypoint, and returns the image
// reference "host/name:tag" and the compressed layer size.
func (r *Registry) AddImage(tb testing.TB, name, tag string, files map[string][]byte, entrypoint []string) (string, int) {
	tb.Helper()
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		hdr := &tar.Header{Name: strings.TrimPrefix(p, "/"), Mode: 0o755, Size: int64(len(files[p])), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			tb.Fatal(err)
		}
		if _, err := tw.Write(files[p]); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	layer := gz.Bytes()
	cfg, err := json.Marshal(map[string]any{
		"architecture": "amd64", "os": "linux",
		"config": map[string]any{"Entrypoint": entrypoint},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{digest(raw.Bytes())}},
	})
	if err != nil {
		tb.Fatal(err)
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.docker.distribution.manifest.v2+json",
		"config":        map[string]any{"mediaType": "application/vnd.docker.container.image.v1+json", "size": len(cfg), "digest": digest(cfg)},
		"layers": []map[string]any{{
			"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip", "size": len(layer), "digest": digest(layer),
		}},
	})
	if err != nil {
		tb.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.blobs[digest(cfg)] = cfg
	r.blobs[digest(layer)] = layer
	r.manifests[name+":"+tag] = manifest
	r.blobs[digest(manifest)] = manifest
	return r.Host() + "/" + name + ":" + tag, len(layer)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	r.mu.Lock()
	user, pass := r.user, r.pass
	r.mu.Unlock()
	if u, p, ok := req.BasicAuth(); user != "" && (!ok || u != user || p != pass) {
		w.Header().Set("WWW-Authenticate", `Basic realm="berth-test"`)
		http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
		return
	}
	path := strings.TrimPrefix(req.URL.Path, "/v2/")
	if req.URL.Path == "/v2/" || req.URL.Path == "/v2" {
		return
	}
	if i := strings.LastIndex(path, "/manifests/"); i >= 0 {
		name, ref := path[:i], path[i+len("/manifests/"):]
		r.mu.Lock()
		m, ok := r.manifests[name+":"+ref]
		if !ok && strings.HasPrefix(ref, "sha256:") {
			m, ok = r.blobs[ref]
		}
		r.mu.Unlock()
		if !ok {
			http.Error(w, `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.docker.distribution.manifest.v2+json")
		w.Header().Set("Docker-Content-Digest", digest(m))
		w.Header().Set("Content-Length", fmt.Sprint(len(m)))
		if req.Method != http.MethodHead {
			_, _ = w.Write(m)
		}
		return
	}
	if i := strings.LastIndex(path, "/blobs/"); i >= 0 {
		d := path[i+len("/blobs/"):]
		r.mu.Lock()
		b, ok := r.blobs[d]
		rate := r.bytesPerSec
		if ok && req.Method == http.MethodGet {
			r.blobGets++
		}
		r.mu.Unlock()
		if !ok {
			http.Error(w, `{"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown"}]}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Docker-Content-Digest", d)
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		if req.Method == http.MethodHead {
			return
		}
		writeThrottled(w, req, b, rate)
		return
	}
	http.NotFound(w, req)
}

// writeThrottled sends b in chunks of a tenth of rate bytes every 100 ms
// (all at once when rate is 0), until the client leaves.
func writeThrottled(w http.ResponseWriter, req *http.Request, b []byte, rate int) {
	if rate <= 0 {
		_, _ = w.Write(b)
		return
	}
	chunk := max(rate/10, 1)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for len(b) > 0 {
		n := min(chunk, len(b))
		if _, err := w.Write(b[:n]); err != nil {
			return
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		b = b[n:]
		if len(b) == 0 {
			return
		}
		select {
		case <-req.Context().Done():
			return
		case <-t.C:
		}
	}
}
