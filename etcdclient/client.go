// Package etcdclient builds berth's etcd clients from one configuration
// (endpoints, client TLS, username and password) for every part that talks
// to etcd: the etcd source, the event sink, the node lease, the status
// writer and the CLI. Each request's latency and error are reported by
// operation through an Observer.
package etcdclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	grpcbackoff "google.golang.org/grpc/backoff"
)

// reconnectMax caps gRPC's delay between connection attempts: its default
// grows to two minutes, too long after etcd comes back.
const reconnectMax = 3 * time.Second

// Config says how to reach etcd. The zero value of every field but
// Endpoints is valid (plain HTTP, no auth, the default dial timeout).
type Config struct {
	Endpoints []string
	// CAFile verifies etcd's server certificate (the system roots when
	// empty); CertFile and KeyFile, set together, authenticate berth.
	// Any of them, or an https:// endpoint, turns TLS on.
	CAFile, CertFile, KeyFile string
	// Username and Password log in to etcd's auth (off when Username is
	// empty).
	Username, Password string
	// AllowInsecureAuth permits Username and Password without TLS, where
	// anyone on the path reads them.
	AllowInsecureAuth bool
	DialTimeout       time.Duration
	// Observer receives every request's operation, duration and error; nil
	// reports nothing.
	Observer Observer
}

// Observer is told about every unary etcd request and every watch opened.
// Operation is the lower-case RPC name: range, put, txn, deleterange,
// leasegrant, leasekeepalive, leaserevoke, watch, ...
type Observer interface {
	EtcdRequest(operation string, d time.Duration, err error)
}

// TLS reports whether the client uses TLS.
func (c Config) TLS() bool {
	if c.CAFile != "" || c.CertFile != "" || c.KeyFile != "" {
		return true
	}
	return slices.ContainsFunc(c.Endpoints, func(e string) bool { return strings.HasPrefix(e, "https://") })
}

// Validate reports the first wrong setting, naming each field (endpoints,
// tls.ca_file, tls.cert_file, tls.key_file, username, password,
// allow_insecure_auth) as name returns it: the configuration key or the
// flag the user set. A username (hence a password) over plain http is
// refused unless AllowInsecureAuth.
func (c Config) Validate(name func(field string) string) error {
	if (c.CertFile == "") != (c.KeyFile == "") {
		return fmt.Errorf("%s and %s must be set together", name("tls.cert_file"), name("tls.key_file"))
	}
	if c.Password != "" && c.Username == "" {
		return fmt.Errorf("%s is set without %s", name("password"), name("username"))
	}
	for _, e := range c.Endpoints {
		if strings.HasPrefix(e, "http://") && c.TLS() {
			return fmt.Errorf("%s: %s is plain http but TLS is configured", name("endpoints"), e)
		}
	}
	if c.Username != "" && !c.TLS() && !c.AllowInsecureAuth && len(c.Endpoints) > 0 {
		return fmt.Errorf("%s: the etcd password would cross plain http (%s); use https:// and %s, or accept the risk with %s",
			name("username"), strings.Join(c.Endpoints, ","), name("tls.ca_file"), name("allow_insecure_auth"))
	}
	return nil
}

// SplitEndpoints splits comma-separated lists of endpoints, dropping
// blanks.
func SplitEndpoints(lists ...string) []string {
	var eps []string
	for _, l := range lists {
		for _, e := range strings.Split(l, ",") {
			if e = strings.TrimSpace(e); e != "" {
				eps = append(eps, e)
			}
		}
	}
	return eps
}

// TLSConfig reads the CA and key pair, as New uses them; nil without TLS.
func (c Config) TLSConfig() (*tls.Config, error) {
	if !c.TLS() {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("etcd CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("etcd CA %s: no PEM certificate in it", c.CAFile)
		}
		tc.RootCAs = pool
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("etcd client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// New connects a client; it does not wait for etcd to answer. The client
// lives until Close or until ctx ends.
func (c Config) New(ctx context.Context) (*clientv3.Client, error) {
	if len(c.Endpoints) == 0 {
		return nil, errors.New("etcd: no endpoints")
	}
	tc, err := c.TLSConfig()
	if err != nil {
		return nil, err
	}
	eps := slices.Clone(c.Endpoints)
	if tc != nil {
		// The client dials endpoints without a scheme; TLS comes from tc.
		for i, e := range eps {
			eps[i] = strings.TrimPrefix(e, "https://")
		}
	}
	dial := c.DialTimeout
	if dial == 0 {
		dial = 5 * time.Second
	}
	opts := []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           grpcbackoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: reconnectMax},
		MinConnectTimeout: 5 * time.Second,
	})}
	if c.Observer != nil {
		opts = append(opts, grpc.WithChainUnaryInterceptor(unaryObserver(c.Observer)),
			grpc.WithChainStreamInterceptor(streamObserver(c.Observer)))
	}
	return clientv3.New(clientv3.Config{
		Endpoints:            eps,
		DialTimeout:          dial,
		DialKeepAliveTime:    10 * time.Second,
		DialKeepAliveTimeout: 5 * time.Second,
		TLS:                  tc,
		Username:             c.Username,
		Password:             c.Password,
		Logger:               zap.NewNop(),
		DialOptions:          opts,
		Context:              ctx,
	})
}

// Operation is the metric label of a gRPC method: "/etcdserverpb.KV/Range"
// is "range".
func Operation(method string) string {
	return strings.ToLower(path.Base(method))
}

func unaryObserver(o Observer) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		start := time.Now()
		err := invoker(ctx, method, req, reply, cc, opts...)
		o.EtcdRequest(Operation(method), time.Since(start), err)
		return err
	}
}

// streamObserver reports the opening of each stream (watch, lease
// keep-alive), not its lifetime.
func streamObserver(o Observer) grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		start := time.Now()
		s, err := streamer(ctx, desc, cc, method, opts...)
		o.EtcdRequest(Operation(method), time.Since(start), err)
		return s, err
	}
}
