// Package prober runs Kubernetes probes (liveness, readiness, startup) and
// lifecycle hook handlers against containers: httpGet, tcpSocket, exec and
// (probes only) grpc.
package prober

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/berth-dev/berth/internal/kubeversion"
	"github.com/berth-dev/berth/runtime"
)

// Target is where a handler runs: the container (for exec) and the pod's
// address (for httpGet, tcpSocket and grpc).
type Target struct {
	ContainerID string
	Spec        *v1.Container
	// PodIP is the sandbox's address; "127.0.0.1" for hostNetwork pods; ""
	// when the pod has none, which fails httpGet, tcpSocket and grpc handlers.
	PodIP string
}

// Executor runs probe and hook handlers. Its zero value is not usable; use
// NewExecutor.
type Executor struct {
	rt     runtime.Runtime
	client *http.Client
}

// NewExecutor runs exec handlers through rt.
func NewExecutor(rt runtime.Runtime) *Executor {
	// Like the kubelet, HTTPS probes do not verify certificates: a probe
	// checks liveness, not identity, and pods often serve self-signed ones.
	tr := &http.Transport{DisableKeepAlives: true, Proxy: nil,
		DialContext:     (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // see above
	return &Executor{rt: rt, client: &http.Client{
		Transport: tr,
		// A redirect counts as success, as for the kubelet when it leaves
		// the host; berth does not follow any.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Handler is the part of a probe or lifecycle hook that says what to run.
type Handler struct {
	Exec      *v1.ExecAction
	HTTPGet   *v1.HTTPGetAction
	TCPSocket *v1.TCPSocketAction
	// GRPC is a probe's only: lifecycle hooks have no grpc action.
	GRPC  *v1.GRPCAction
	Sleep *v1.SleepAction
	// purpose names the kubelet's User-Agent of an HTTP request:
	// kube-probe (FromProbe, and "") or kube-lifecycle (FromLifecycle).
	purpose string
}

// FromProbe returns the handler of p.
func FromProbe(p *v1.Probe) Handler {
	return Handler{Exec: p.Exec, HTTPGet: p.HTTPGet, TCPSocket: p.TCPSocket, GRPC: p.GRPC, purpose: "probe"}
}

// FromLifecycle returns the handler of a lifecycle hook.
func FromLifecycle(h *v1.LifecycleHandler) Handler {
	return Handler{Exec: h.Exec, HTTPGet: h.HTTPGet, TCPSocket: h.TCPSocket, Sleep: h.Sleep, purpose: "lifecycle"}
}

// userAgent is the kubelet's User-Agent for h's HTTP request:
// kube-<purpose>/<major>.<minor> of the Kubernetes release berth speaks.
func (h Handler) userAgent() string {
	purpose := h.purpose
	if purpose == "" {
		purpose = "probe"
	}
	return kubeversion.Get().UserAgent(purpose)
}

// Run runs h against t within timeout; nil means success.
func (e *Executor) Run(ctx context.Context, h Handler, t Target, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch {
	case h.Exec != nil:
		code, out, err := e.rt.Exec(ctx, t.ContainerID, h.Exec.Command)
		if err != nil {
			return err
		}
		if code != 0 {
			return fmt.Errorf("command %q exited with %d: %s", strings.Join(h.Exec.Command, " "), code, strings.TrimSpace(string(out)))
		}
		return nil
	case h.HTTPGet != nil:
		return e.httpGet(ctx, h.HTTPGet, t, h.userAgent())
	case h.TCPSocket != nil:
		port, err := resolvePort(h.TCPSocket.Port, t.Spec)
		if err != nil {
			return err
		}
		host, err := target(h.TCPSocket.Host, t)
		if err != nil {
			return err
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return err
		}
		return conn.Close()
	case h.GRPC != nil:
		return grpcCheck(ctx, h.GRPC, t, timeout)
	case h.Sleep != nil:
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(h.Sleep.Seconds) * time.Second):
		}
		return nil
	}
	return errors.New("handler has no action")
}

// httpGet sends g's request with the kubelet's headers: g's own, then
// User-Agent ua and Accept */* unless g sets them (an Accept set empty is
// dropped), and g's Host header as the request's host.
func (e *Executor) httpGet(ctx context.Context, g *v1.HTTPGetAction, t Target, ua string) error {
	port, err := resolvePort(g.Port, t.Spec)
	if err != nil {
		return err
	}
	host, err := target(g.Host, t)
	if err != nil {
		return err
	}
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	path := g.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port))}
	if p, q, ok := strings.Cut(path, "?"); ok {
		u.Path, u.RawQuery = p, q
	} else {
		u.Path = path
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	for _, h := range g.HTTPHeaders {
		req.Header.Add(h.Name, h.Value)
	}
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header.Set("User-Agent", ua)
	}
	if _, ok := req.Header["Accept"]; !ok {
		req.Header.Set("Accept", "*/*")
	} else if req.Header.Get("Accept") == "" {
		req.Header.Del("Accept")
	}
	if host := req.Header.Get("Host"); host != "" {
		req.Host = host
	}
	req.Header.Del("Host") // sent as req.Host: Go ignores it in the header
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 10<<10))
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("HTTP probe failed with statuscode: %d", resp.StatusCode)
	}
	return nil
}

// errNoPodIP fails a handler whose pod has no address (yet, or any more):
// connecting to "" would reach the host's own loopback.
var errNoPodIP = errors.New("the pod has no IP address (its sandbox is not running)")

// target is the handler's host, else the pod's IP; never empty.
func target(host string, t Target) (string, error) {
	if host != "" {
		return host, nil
	}
	if t.PodIP == "" {
		return "", errNoPodIP
	}
	return t.PodIP, nil
}

func resolvePort(p intstr.IntOrString, c *v1.Container) (int, error) {
	if p.Type == intstr.Int {
		if p.IntVal <= 0 || p.IntVal > 65535 {
			return 0, fmt.Errorf("invalid port %d", p.IntVal)
		}
		return int(p.IntVal), nil
	}
	if c != nil {
		for _, cp := range c.Ports {
			if cp.Name == p.StrVal {
				return int(cp.ContainerPort), nil
			}
		}
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil {
		return n, nil
	}
	return 0, fmt.Errorf("port %q not found in container ports", p.StrVal)
}
