package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/berth-dev/berth/etcdclient"
)

// probeTimeout bounds the dial and handshake of one endpoint's probe.
const probeTimeout = 3 * time.Second

// probeEtcd connects to each endpoint of c, with its TLS handshake when c
// uses TLS, and returns nil once one succeeds: the etcd client itself
// retries a refused connection until its deadline and then says only
// "context deadline exceeded". Otherwise the error names each endpoint and
// what failed, in the words of the flags to fix it.
func probeEtcd(ctx context.Context, c etcdclient.Config) error {
	var tc *tls.Config
	if c.TLS() {
		var err error
		if tc, err = c.TLSConfig(); err != nil {
			return nil // the client's own setup reports the files
		}
	}
	var errs []error
	for _, ep := range c.Endpoints {
		err := probeEndpoint(ctx, ep, tc, c.CertFile != "")
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func probeEndpoint(ctx context.Context, ep string, tc *tls.Config, hasCert bool) error {
	host := ep
	if u, err := url.Parse(ep); err == nil && u.Host != "" {
		host = u.Host
	}
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "2379")
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", host)
	if err != nil {
		return fmt.Errorf("cannot connect to etcd at %s: %s", ep, dialReason(err))
	}
	defer conn.Close()
	if tc == nil {
		return nil
	}
	cfg := tc.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(host)
	}
	cfg.NextProtos = []string{"h2"}
	tconn := tls.Client(conn, cfg)
	deadline, _ := ctx.Deadline()
	_ = tconn.SetDeadline(deadline)
	err = tconn.HandshakeContext(ctx)
	if err == nil {
		// With TLS 1.3 the server refuses a missing client certificate
		// after the handshake: its alert is the first thing to read.
		_ = tconn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		_, err = tconn.Read(make([]byte, 1))
		var ne net.Error
		if err == nil || errors.As(err, &ne) && ne.Timeout() {
			return nil
		}
	}
	return fmt.Errorf("TLS handshake with etcd at %s: %s", ep, tlsReason(err, hasCert))
}

// dialReason is a dial error without the Go call chain.
func dialReason(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %s", probeTimeout)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "unknown host " + dnsErr.Name
	}
	return err.Error()
}

// tlsReason says what a failed handshake means for the flags. An alert
// from the server is a net.OpError "remote error" around an unexported
// type: only its text tells which.
func tlsReason(err error, hasCert bool) string {
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	msg := err.Error()
	remote := strings.Contains(msg, "remote error: tls: ")
	switch {
	case remote && !hasCert && (strings.Contains(msg, "certificate required") || strings.Contains(msg, "bad certificate") ||
		strings.Contains(msg, "handshake failure")):
		return "the server wants a client certificate: pass --etcd-cert and --etcd-key"
	case remote && strings.Contains(msg, "certificate"):
		return "the server refused the client certificate (" + msg + "): check --etcd-cert and --etcd-key"
	case errors.As(err, &unknownCA):
		return "the server's certificate is not signed by a CA berth trusts: pass its CA with --etcd-cacert"
	case errors.As(err, &hostErr):
		return hostErr.Error()
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		return "the server does not speak TLS: use an http:// endpoint"
	}
	return msg
}
