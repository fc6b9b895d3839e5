package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
)

// countingProxy is a reverse proxy on a Unix socket in front of the Docker
// engine's socket. It counts requests by method and path pattern (IDs and
// image names replaced by placeholders, API version prefix dropped). A
// long-lived request such as the events stream counts once, when it starts.
type countingProxy struct {
	srv      *http.Server
	mu       sync.Mutex
	counts   map[string]int
	inflight map[string]int
}

func startProxy(sock, upstream string) (*countingProxy, error) {
	target, ok := strings.CutPrefix(upstream, "unix://")
	if !ok {
		return nil, fmt.Errorf("the counting proxy needs a unix:// Docker host, not %s", upstream)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme = "http"
			r.Out.URL.Host = "docker"
		},
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", target)
			},
			MaxIdleConnsPerHost: 16,
		},
		FlushInterval: -1, // stream (events, logs) without buffering
	}
	p := &countingProxy{counts: map[string]int{}, inflight: map[string]int{}}
	p.srv = &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key := r.Method + " " + pathPattern(r.URL.Path)
			p.mu.Lock()
			p.counts[key]++
			p.inflight[key]++
			p.mu.Unlock()
			defer func() {
				p.mu.Lock()
				p.inflight[key]--
				p.mu.Unlock()
			}()
			rp.ServeHTTP(w, r)
		}),
	}
	_ = os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, err
	}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func (p *countingProxy) close() { _ = p.srv.Close() }

// snapshot copies the counts so far.
func (p *countingProxy) snapshot() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.counts))
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}

// open returns the requests in flight (streams), by pattern.
func (p *countingProxy) open() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.inflight {
		if v > 0 {
			out[k] = v
		}
	}
	return out
}

// diff returns b − a per key, without zeros.
func diff(a, b map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range b {
		if d := v - a[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

var versionPrefix = regexp.MustCompile(`^/v[0-9]+\.[0-9]+/`)

// pathPattern turns /v1.41/containers/3f2a…/json into /containers/{id}/json
// and /v1.41/images/berth/testapp:1/json into /images/{name}/json.
func pathPattern(path string) string {
	path = versionPrefix.ReplaceAllString(path, "/")
	seg := strings.Split(strings.Trim(path, "/"), "/")
	fixed := map[string]bool{"json": true, "create": true, "prune": true, "load": true, "search": true, "get": true}
	if len(seg) >= 2 && !fixed[seg[1]] {
		switch seg[0] {
		case "containers", "exec", "networks", "volumes":
			seg[1] = "{id}"
		case "images":
			last := seg[len(seg)-1]
			seg = []string{"images", "{name}"}
			if last == "json" || last == "history" || last == "tag" || last == "push" {
				seg = append(seg, last)
			}
		}
	}
	return "/" + strings.Join(seg, "/")
}
