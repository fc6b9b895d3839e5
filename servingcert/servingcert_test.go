package servingcert

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

var start = time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)

func testSANs() SANs {
	var s SANs
	for _, h := range []string{"127.0.0.1", "::1", "localhost", "node-a"} {
		s.add(h)
	}
	return s
}

func ensure(t *testing.T, dir string, sans SANs, now time.Time) Result {
	t.Helper()
	res, err := Ensure(Options{Dir: dir, Name: "node-a", SANs: sans, Clock: clocktesting.NewFakePassiveClock(now)})
	if err != nil {
		t.Fatalf("Ensure at %s: %v", now, err)
	}
	return res
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s: no PEM", path)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

func TestGeneratesThenReuses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	res := ensure(t, dir, testSANs(), start)
	if res.Generated != "no berth-serving.crt yet" {
		t.Errorf("Generated = %q", res.Generated)
	}
	if m := mode(t, dir); m != os.ModeDir|0o700 {
		t.Errorf("directory mode %v, want drwx------", m)
	}
	if m := mode(t, res.KeyFile); m != 0o600 {
		t.Errorf("key mode %v, want 0600", m)
	}
	c := readCert(t, res.CertFile)
	pub, ok := c.PublicKey.(*ecdsa.PublicKey)
	switch {
	case !ok || pub.Curve != elliptic.P256():
		t.Errorf("public key %T, want ECDSA P-256", c.PublicKey)
	case !c.IsCA || !c.BasicConstraintsValid || c.MaxPathLen != 0 || c.CheckSignatureFrom(c) != nil:
		t.Errorf("not a self-signed CA of path length 0: IsCA %v MaxPathLen %d", c.IsCA, c.MaxPathLen)
	case !c.NotAfter.Equal(start.Add(Validity)) || !res.NotAfter.Equal(c.NotAfter) || c.NotBefore.After(start):
		t.Errorf("valid %s..%s (result %s), want until %s", c.NotBefore, c.NotAfter, res.NotAfter, start.Add(Validity))
	case len(c.ExtKeyUsage) != 1 || c.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth:
		t.Errorf("extended key usage %v", c.ExtKeyUsage)
	}
	if got := strings.Join(c.DNSNames, ","); got != "localhost,node-a" {
		t.Errorf("DNS names %s", got)
	}
	if len(c.IPAddresses) != 2 || !c.IPAddresses[0].Equal(net.IPv4(127, 0, 0, 1)) || !c.IPAddresses[1].Equal(net.IPv6loopback) {
		t.Errorf("IP addresses %v", c.IPAddresses)
	}

	certPEM, _ := os.ReadFile(res.CertFile)
	keyPEM, _ := os.ReadFile(res.KeyFile)
	// A later start, even 334 days later, reuses the pair.
	for _, now := range []time.Time{start, start.Add(Validity - MinRemaining)} {
		if again := ensure(t, dir, testSANs(), now); again.Generated != "" {
			t.Errorf("at %s: regenerated (%s), want the pair reused", now, again.Generated)
		}
	}
	// A subset of the SANs is covered too.
	if again := ensure(t, dir, SANs{DNSNames: []string{"node-a"}}, start); again.Generated != "" {
		t.Errorf("fewer SANs: regenerated (%s)", again.Generated)
	}
	c2, _ := os.ReadFile(res.CertFile)
	k2, _ := os.ReadFile(res.KeyFile)
	if !bytes.Equal(certPEM, c2) || !bytes.Equal(keyPEM, k2) {
		t.Error("the reused pair's files changed")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("directory holds %d entries, want the 2 files (no temporary left)", len(entries))
	}
}

// Each unfit pair is replaced by a new one, saying why.
func TestRegeneratesAnUnfitPair(t *testing.T) {
	otherKey := func(t *testing.T, dir string) {
		_, keyPEM, _, err := generate("other", testSANs(), start)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, KeyName), keyPEM, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		spoil  func(t *testing.T, dir string)
		now    time.Time
		sans   SANs
		reason string
	}{
		{name: "expiring", now: start.Add(Validity - MinRemaining + time.Second), reason: "berth-serving.crt expires at 2027-12-06T08:00:00Z, in less than 720h0m0s"},
		{name: "expired", now: start.Add(Validity + time.Hour), reason: "berth-serving.crt expires at"},
		{name: "not yet valid", now: start.Add(-2 * time.Hour), reason: "berth-serving.crt is not valid before 2026-12-06T07:00:00Z"},
		{name: "new IP", sans: SANs{IPs: []net.IP{net.ParseIP("10.9.9.9")}}, reason: "berth-serving.crt does not cover 10.9.9.9"},
		{name: "new node name", sans: SANs{DNSNames: []string{"node-b"}}, reason: "berth-serving.crt does not cover node-b"},
		{name: "mismatched key", spoil: otherKey, reason: "berth-serving.crt and berth-serving.key are not a pair: tls: private key does not match public key"},
		{name: "missing key", spoil: func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, KeyName)) }, reason: "no berth-serving.key yet"},
		{name: "garbage certificate", spoil: func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, CertName), []byte("garbage"), 0o644)
		}, reason: "are not a pair"},
		{name: "key readable by others", spoil: func(t *testing.T, dir string) {
			os.Chmod(filepath.Join(dir, KeyName), 0o644)
		}, reason: "berth-serving.key has mode 0644, wider than 0600"},
		{name: "directory at the certificate", spoil: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, CertName))
			os.Mkdir(filepath.Join(dir, CertName), 0o700)
		}, reason: "is not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "pki")
			first := ensure(t, dir, testSANs(), start)
			old, _ := os.ReadFile(first.CertFile)
			if tc.spoil != nil {
				tc.spoil(t, dir)
			}
			now := tc.now
			if now.IsZero() {
				now = start
			}
			sans := testSANs()
			sans.DNSNames = append(sans.DNSNames, tc.sans.DNSNames...)
			sans.IPs = append(sans.IPs, tc.sans.IPs...)
			if tc.name == "directory at the certificate" {
				// rename(2) does not replace a directory: Ensure fails naming the file.
				if _, err := Ensure(Options{Dir: dir, Name: "node-a", SANs: sans, Clock: clocktesting.NewFakePassiveClock(now)}); err == nil ||
					!strings.Contains(err.Error(), "write berth-serving.crt in "+dir) {
					t.Fatalf("Ensure = %v, want the write of the certificate named", err)
				}
				return
			}
			res := ensure(t, dir, sans, now)
			if !strings.Contains(res.Generated, tc.reason) {
				t.Errorf("Generated = %q, want %q", res.Generated, tc.reason)
			}
			c := readCert(t, res.CertFile)
			if b, _ := os.ReadFile(res.CertFile); bytes.Equal(b, old) {
				t.Fatal("the certificate was not replaced")
			}
			if now.Before(c.NotBefore) || now.Add(Validity-time.Second).After(c.NotAfter) || sans.missing(c) != "" {
				t.Errorf("the new certificate (%s..%s, %v %v) does not fit", c.NotBefore, c.NotAfter, c.DNSNames, c.IPAddresses)
			}
			if _, err := tls.LoadX509KeyPair(res.CertFile, res.KeyFile); err != nil {
				t.Errorf("the new pair: %v", err)
			}
			if m := mode(t, res.KeyFile); m != 0o600 {
				t.Errorf("key mode %v", m)
			}
			if again := ensure(t, dir, sans, now); again.Generated != "" {
				t.Errorf("the new pair is not reused: %s", again.Generated)
			}
		})
	}
}

// A link planted at either file is not followed: not read (a fit pair
// elsewhere is not reused), not written through (its target is left as
// it was); the link itself is replaced by a regular file.
func TestLinksAreNotFollowed(t *testing.T) {
	for _, name := range []string{CertName, KeyName} {
		t.Run(name, func(t *testing.T) {
			elsewhere := filepath.Join(t.TempDir(), "elsewhere")
			fit := ensure(t, elsewhere, testSANs(), start)
			certPEM, _ := os.ReadFile(fit.CertFile)
			keyPEM, _ := os.ReadFile(fit.KeyFile)
			dir := filepath.Join(t.TempDir(), "pki")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			other := CertName
			if name == CertName {
				other = KeyName
			}
			// The other file is a copy, the one under test a link: together a fit pair.
			if err := os.WriteFile(filepath.Join(dir, other), map[string][]byte{CertName: certPEM, KeyName: keyPEM}[other], 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(elsewhere, name), filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
			res := ensure(t, dir, testSANs(), start)
			if res.Generated != name+" is a symbolic link (not followed)" {
				t.Errorf("Generated = %q", res.Generated)
			}
			if m := mode(t, filepath.Join(dir, name)); !m.IsRegular() {
				t.Errorf("%s is %v after Ensure, want a regular file", name, m)
			}
			if c, _ := os.ReadFile(fit.CertFile); !bytes.Equal(c, certPEM) {
				t.Error("the link's target certificate was written")
			}
			if k, _ := os.ReadFile(fit.KeyFile); !bytes.Equal(k, keyPEM) {
				t.Error("the link's target key was written")
			}
		})
	}
}

func TestDirectoryLinkIsRefused(t *testing.T) {
	target := t.TempDir()
	dir := filepath.Join(t.TempDir(), "pki")
	if err := os.Symlink(target, dir); err != nil {
		t.Fatal(err)
	}
	_, err := Ensure(Options{Dir: dir, Name: "node-a", SANs: testSANs(), Clock: clocktesting.NewFakePassiveClock(start)})
	if err == nil || err.Error() != "serving certificate directory "+dir+" is a symbolic link: berth keeps its serving key there and follows no link; remove it" {
		t.Fatalf("Ensure through a linked directory: %v", err)
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("the link's target got %d entries", len(entries))
	}
	file := filepath.Join(t.TempDir(), "pki")
	os.WriteFile(file, nil, 0o600)
	if _, err := Ensure(Options{Dir: file, SANs: testSANs(), Clock: clocktesting.NewFakePassiveClock(start)}); err == nil ||
		!strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("Ensure in a file: %v", err)
	}
}

func TestDirectoryModeIsTightened(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	ensure(t, dir, testSANs(), start)
	if m := mode(t, dir); m != os.ModeDir|0o700 {
		t.Errorf("directory mode %v, want drwx------", m)
	}
}

// A client that trusts the certificate file alone (as a kubeconfig's
// certificate-authority-data) reaches the server at each loopback SAN.
func TestClientTrustsTheCertificateAsItsRoot(t *testing.T) {
	res := ensure(t, filepath.Join(t.TempDir(), "pki"), testSANs(), time.Now())
	pair, err := tls.LoadX509KeyPair(res.CertFile, res.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	srv.StartTLS()
	defer srv.Close()
	pemCA, _ := os.ReadFile(res.CertFile)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pemCA)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	for _, host := range []string{"127.0.0.1", "localhost"} {
		resp, err := c.Get("https://" + net.JoinHostPort(host, port) + "/")
		if err != nil {
			t.Errorf("GET through %s: %v", host, err)
			continue
		}
		resp.Body.Close()
	}
	// A name it does not cover is refused.
	c.Transport.(*http.Transport).TLSClientConfig.ServerName = "node-b"
	if _, err := c.Get(srv.URL); err == nil || !strings.Contains(err.Error(), "node-b") {
		t.Errorf("GET as node-b: %v, want a certificate name error", err)
	}
}
