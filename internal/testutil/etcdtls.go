package testutil

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// TestCA is a throwaway certificate authority with a server certificate for
// 127.0.0.1, ::1 and localhost and a client certificate (CN "client"), all
// PEM files; the keys are ECDSA P-256.
type TestCA struct {
	CAFile                string
	ServerCert, ServerKey string
	ClientCert, ClientKey string
}

// NewTestCA generates a TestCA and writes its files into dir (ca.pem,
// server.pem, server-key.pem, client.pem, client-key.pem).
func NewTestCA(tb testing.TB, dir string) *TestCA {
	tb.Helper()
	ca := &TestCA{CAFile: filepath.Join(dir, "ca.pem"),
		ServerCert: filepath.Join(dir, "server.pem"), ServerKey: filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client-key.pem")}
	now := time.Now()
	caKey := newP256(tb)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "berth test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		tb.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		tb.Fatal(err)
	}
	writePEM(tb, ca.CAFile, "CERTIFICATE", caDER)
	issue := func(serial int64, cn string, usage []x509.ExtKeyUsage, ips []net.IP, dns []string, certFile, keyFile string) {
		key := newP256(tb)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usage, IPAddresses: ips, DNSNames: dns}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			tb.Fatal(err)
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			tb.Fatal(err)
		}
		writePEM(tb, certFile, "CERTIFICATE", der)
		writePEM(tb, keyFile, "PRIVATE KEY", keyDER)
	}
	// etcd also presents its server certificate as a client (its gateway
	// dials itself), so that one serves both purposes.
	issue(2, "localhost", []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		[]net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, []string{"localhost"}, ca.ServerCert, ca.ServerKey)
	issue(3, "client", []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, nil, nil, ca.ClientCert, ca.ClientKey)
	return ca
}

func newP256(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

func writePEM(tb testing.TB, path, typ string, der []byte) {
	tb.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// tlsConfig trusts the CA and, if withCert, presents the client certificate.
func (ca *TestCA) tlsConfig(withCert bool) (*tls.Config, error) {
	pemCA, err := os.ReadFile(ca.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemCA) {
		return nil, fmt.Errorf("no certificate in %s", ca.CAFile)
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if withCert {
		cert, err := tls.LoadX509KeyPair(ca.ClientCert, ca.ClientKey)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// StartEtcdTLS starts a fresh single-member etcd serving clients only over
// https (e.ClientURL), requiring a client certificate signed by ca; peers stay
// on http. e.Client, Put, Delete and Count do not work on it: use TLSClient.
func StartEtcdTLS(tb testing.TB, ca *TestCA) *Etcd {
	tb.Helper()
	e := NewEtcd(tb)
	e.ClientURL = "https://" + strings.TrimPrefix(e.ClientURL, "http://")
	e.StartTLS(ca)
	return e
}

// StartTLS (re)starts e like Start, with its client URL (https) secured by
// ca and client certificates required, and waits (up to 15 s) for health.
func (e *Etcd) StartTLS(ca *TestCA) {
	e.tb.Helper()
	cfg, err := ca.tlsConfig(true)
	if err != nil {
		e.tb.Fatal(err)
	}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	defer hc.CloseIdleConnections()
	e.startWith(e.ClientURL, []string{"--cert-file", ca.ServerCert, "--key-file", ca.ServerKey,
		"--trusted-ca-file", ca.CAFile, "--client-cert-auth"}, hc)
}

// TLSClient returns a client of e presenting ca's client certificate and, if
// user is not empty, authenticating as user; it is closed when the test ends.
func (e *Etcd) TLSClient(ca *TestCA, user, password string) *clientv3.Client {
	e.tb.Helper()
	c, err := newTLSClient([]string{e.ClientURL}, ca, true, user, password)
	if err != nil {
		e.tb.Fatal(err)
	}
	e.tb.Cleanup(func() { c.Close() })
	return c
}

func newTLSClient(endpoints []string, ca *TestCA, withCert bool, user, password string) (*clientv3.Client, error) {
	cfg, err := ca.tlsConfig(withCert)
	if err != nil {
		return nil, err
	}
	return clientv3.New(clientv3.Config{Endpoints: endpoints, TLS: cfg, Username: user, Password: password,
		DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
}

// EnableAuth adds user root (with password) holding role root, and user
// (with password) holding a role that may read and write every key, then
// turns authentication on. cli must be able to do all that (auth still off).
func EnableAuth(tb testing.TB, cli *clientv3.Client, user, password string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	role := user + "-readwrite"
	steps := []struct {
		what string
		do   func() error
	}{
		{"add user root", func() error { _, err := cli.UserAdd(ctx, "root", password); return err }},
		{"grant root to root", func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err }},
		{"add user " + user, func() error { _, err := cli.UserAdd(ctx, user, password); return err }},
		{"add role " + role, func() error { _, err := cli.RoleAdd(ctx, role); return err }},
		{"grant readwrite on all keys to " + role, func() error {
			// Key "\x00" with range end "\x00": from the smallest key on (WithFromKey).
			_, err := cli.RoleGrantPermission(ctx, role, "\x00", "\x00", clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		}},
		{"grant " + role + " to " + user, func() error { _, err := cli.UserGrantRole(ctx, user, role); return err }},
		{"enable auth", func() error { _, err := cli.AuthEnable(ctx); return err }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			tb.Fatalf("etcd %s: %v", s.what, err)
		}
	}
}
