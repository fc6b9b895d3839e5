package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// apiClient is how the client commands reach a running berth: the server
// and token its locator finds; through client-go (kube.go) for the
// Kubernetes API, through plain HTTP (here) for berth's own routes that API
// lacks (claims), with one error for an unreachable berth, the way to a
// token for a 401, and the server's own message for other refusals.
type apiClient struct {
	locator
}

// token returns the bearer token (the token file's first line), "" without
// a token file.
func (c *apiClient) token() (string, error) {
	if err := c.locate(); err != nil {
		return "", err
	}
	if c.tokenFile == "" {
		return "", nil
	}
	b, err := os.ReadFile(c.tokenFile)
	if err != nil {
		return "", fmt.Errorf("token file (from %s): %w", c.tokenFrom, err)
	}
	return strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]), nil
}

func (c *apiClient) url(path string) string { return strings.TrimRight(c.server, "/") + path }

// newRequest builds an authenticated request for path (which may carry a
// query).
func (c *apiClient) newRequest(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	if err := c.locate(); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url(path), body)
	if err != nil {
		return nil, fmt.Errorf("--server %s: %w", c.server, err)
	}
	tok, err := c.token()
	if err != nil {
		return nil, err
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return req, nil
}

// errUnreachable wraps every failure to get an answer from berth.
var errUnreachable = errors.New("cannot reach berth")

// stream sends the request and returns the open response of a 2xx answer;
// the caller closes its body. timeout 0 means none (follow, watch).
func (c *apiClient) stream(req *http.Request, timeout time.Duration) (*http.Response, error) {
	hc, err := c.httpClient(timeout)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, c.errUnreachable(err)
	}
	if resp.StatusCode == http.StatusUnauthorized {
		resp.Body.Close()
		return nil, c.errUnauthorized()
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("berth at %s: %s: %s", c.server, resp.Status, strings.TrimSpace(string(msg)))
	}
	return resp, nil
}

// getJSON GETs path and decodes the answer into v.
func (c *apiClient) getJSON(ctx context.Context, path string, v any) error {
	req, err := c.newRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	resp, err := c.stream(req, 10*time.Second)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(v); err != nil {
		return fmt.Errorf("berth at %s: decode %s: %w", c.server, path, err)
	}
	return nil
}

// httpClient is a client with timeout (0: none) that trusts the located
// server's CA file, if any.
func (c *apiClient) httpClient(timeout time.Duration) (*http.Client, error) {
	if err := c.locate(); err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: timeout}
	if c.caFile == "" {
		return hc, nil
	}
	pem, err := c.readCA()
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("the server's certificate %s (%s): no PEM certificate in it", c.caFile, c.caFrom)
	}
	hc.Transport = &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return hc, nil
}
