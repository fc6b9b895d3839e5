package sources

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/berth-dev/berth/manifest"
)

// DefaultHTTPTimeout bounds one poll of an HTTPSource (request and body)
// unless its Timeout is set; it is lowered to the interval when that is
// shorter.
const DefaultHTTPTimeout = 10 * time.Second

// DefaultHTTPInterval is the poll interval of an HTTPSource created with an
// interval <= 0.
const DefaultHTTPInterval = 20 * time.Second

// HTTPSource declares the pods of the manifest served at a URL, polled at
// once and then every interval. The body may hold anything Decode accepts; an
// empty (or all-whitespace) 200 body declares no pods. The URL is the origin
// of every pod and error.
//
// Each poll sends one Update:
//   - 200: the decoded body. A body that cannot be decoded at all yields an
//     origin-level ManifestError (empty PodKey), so the pods the URL declared
//     before keep running; a body larger than MaxManifestBytes is such an
//     error too.
//   - 304 Not Modified (the source sends If-None-Match / If-Modified-Since
//     from the last 200's ETag / Last-Modified), or a 200 whose body hashes
//     the same as the last one: the last Update is sent again without
//     decoding. Re-sending, rather than staying quiet, is the source's
//     liveness signal: the informer finds nothing changed but records the
//     sync time.
//   - any other status, a timeout or a transport error: Update{Err}, which
//     keeps every pod of the source and does not mark it synced.
//
// What the body declares beyond Options.Quota is left out with an error
// naming the quota (quotaGate); the body's bytes are charged once.
type HTTPSource struct {
	// Timeout bounds each poll; zero means DefaultHTTPTimeout, or the
	// interval when that is shorter. Set before Run.
	Timeout time.Duration
	// Client makes the requests; nil means a client of berth's own
	// (proxy settings from the environment). Set before Run.
	Client *http.Client

	name     string
	url      string
	interval time.Duration
	headers  map[string]string
	opts     Options

	// State of the last 200, reused on 304 and unchanged bodies.
	last         *Update
	lastHash     [sha256.Size]byte
	etag         string
	lastModified string
	lastSize     int64 // of the last 200's body: the bytes it charges
	lastErr      string
	warned       warnLog
	gate         quotaGate
}

// NewHTTPSource returns a source named name polling url every interval
// (DefaultHTTPInterval when <= 0), sending headers with each request.
func NewHTTPSource(name, url string, interval time.Duration, headers map[string]string, opts Options) *HTTPSource {
	if interval <= 0 {
		interval = DefaultHTTPInterval
	}
	h := make(map[string]string, len(headers))
	for k, v := range headers {
		h[k] = v
	}
	return &HTTPSource{name: name, url: url, interval: interval, headers: h, opts: opts}
}

// Name returns the source's name.
func (s *HTTPSource) Name() string { return s.name }

func (s *HTTPSource) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return min(DefaultHTTPTimeout, s.interval)
}

// Run polls and reports until ctx ends, then returns nil. It must not be
// called more than once at a time.
func (s *HTTPSource) Run(ctx context.Context, out chan<- Update) error {
	log := s.opts.logger().With("source", s.name, "url", s.url)
	client := s.Client
	if client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		defer tr.CloseIdleConnections()
		client = &http.Client{Transport: tr}
	}
	t := s.opts.clock().NewTicker(s.interval)
	defer t.Stop()
	for {
		u := s.poll(ctx, client, log)
		if ctx.Err() != nil || !send(ctx, out, u) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// poll makes one request and returns the Update to send.
func (s *HTTPSource) poll(ctx context.Context, client *http.Client, log *slog.Logger) Update {
	u, err := s.fetch(ctx, client)
	if err != nil {
		if msg := err.Error(); msg != s.lastErr {
			s.lastErr = msg
			log.Warn("cannot read manifests; keeping the last good pods", "err", err)
		}
		return Update{Source: s.name, Err: err}
	}
	if s.lastErr != "" {
		s.lastErr = ""
		log.Info("manifests readable again")
	}
	u = s.gate.admit(s.name, s.opts.Quota, u, func(string) int64 { return s.lastSize })
	s.warned.log(log, u.Pods)
	return u
}

func (s *HTTPSource) fetch(ctx context.Context, client *http.Client) (Update, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return Update{}, err
	}
	req.Header.Set("User-Agent", "berth")
	req.Header.Set("Accept", "application/yaml, application/json;q=0.9, */*;q=0.8")
	for k, v := range s.headers {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	if s.last != nil {
		if s.etag != "" {
			req.Header.Set("If-None-Match", s.etag)
		}
		if s.lastModified != "" {
			req.Header.Set("If-Modified-Since", s.lastModified)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		return Update{}, fmt.Errorf("GET %s: %w", s.url, unwrapURLError(err))
	}
	defer resp.Body.Close()

	switch {
	case resp.StatusCode == http.StatusNotModified:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		if s.last == nil {
			return Update{}, fmt.Errorf("GET %s: 304 Not Modified without a previous response", s.url)
		}
		s.keepValidators(resp)
		return cloneUpdate(*s.last), nil
	case resp.StatusCode != http.StatusOK:
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
		msg := fmt.Sprintf("GET %s: %s", s.url, resp.Status)
		if t := strings.Join(strings.Fields(string(snippet)), " "); t != "" && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/") {
			msg += ": " + t
		}
		return Update{}, errors.New(msg)
	}

	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxManifestBytes+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return Update{}, fmt.Errorf("GET %s: reading body: timed out: %w", s.url, err)
		}
		return Update{}, fmt.Errorf("GET %s: reading body: %w", s.url, err)
	}
	if len(data) > MaxManifestBytes {
		// Not remembered: the next poll asks again unconditionally.
		s.last, s.etag, s.lastModified = nil, "", ""
		return Update{Source: s.name, Errors: []manifest.ManifestError{{
			Origin: s.url, Err: fmt.Sprintf("body is larger than %d MiB", MaxManifestBytes>>20),
		}}}, nil
	}
	sum := sha256.Sum256(data)
	if s.last == nil || sum != s.lastHash {
		u := Update{Source: s.name}
		if len(bytes.TrimSpace(data)) > 0 {
			r := manifest.DecodeAll(s.name, s.url, data, s.opts.Options)
			u.Pods, u.Objects, u.Errors, u.Warnings = r.Pods, r.Objects, r.Errors, r.Warnings
		}
		s.last, s.lastHash, s.lastSize = &u, sum, int64(len(data))
	}
	s.etag, s.lastModified = "", ""
	s.keepValidators(resp)
	return cloneUpdate(*s.last), nil
}

func (s *HTTPSource) keepValidators(resp *http.Response) {
	if v := resp.Header.Get("ETag"); v != "" {
		s.etag = v
	}
	if v := resp.Header.Get("Last-Modified"); v != "" {
		s.lastModified = v
	}
}

// unwrapURLError drops the method and URL that *url.Error repeats.
func unwrapURLError(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	if ue.Timeout() || errors.Is(ue.Err, context.DeadlineExceeded) {
		return fmt.Errorf("timed out: %w", ue.Err)
	}
	return ue.Err
}
