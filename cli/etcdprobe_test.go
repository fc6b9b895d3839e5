package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
)

// The etcd commands fail at once on a refused connection, naming the
// endpoint, instead of waiting out --etcd-timeout.
func TestEtcdRefusedFailsFast(t *testing.T) {
	url := closedURL(t)
	start := time.Now()
	_, _, err := execute(getCmd(), "nodes", "--etcd-endpoints", url)
	took := time.Since(start)
	if err == nil || err.Error() != "cannot connect to etcd at "+url+": connection refused" {
		t.Fatalf("get nodes on a closed port: %v", err)
	}
	if took > 2*time.Second {
		t.Fatalf("refusal took %s", took)
	}
}

// A failed TLS handshake says so, and what to pass: the client
// certificate etcd wants, or the CA that signed etcd's.
func TestEtcdTLSHandshakeFailureIsNamed(t *testing.T) {
	ca := testutil.NewTestCA(t, t.TempDir())
	e := testutil.StartEtcdTLS(t, ca)
	ep := e.ClientURL
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--etcd-cacert", ca.CAFile}, "TLS handshake with etcd at " + ep + ": the server wants a client certificate: pass --etcd-cert and --etcd-key"},
		{[]string{"--etcd-cert", ca.ClientCert, "--etcd-key", ca.ClientKey}, "TLS handshake with etcd at " + ep + ": the server's certificate is not signed by a CA berth trusts: pass its CA with --etcd-cacert"},
	} {
		start := time.Now()
		_, _, err := execute(getCmd(), append([]string{"nodes", "--etcd-endpoints", ep}, tc.args...)...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("get nodes %v:\n got %v\nwant %s", tc.args, err, tc.want)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("get nodes %v took %s", tc.args, took)
		}
	}
	out, errOut, err := execute(getCmd(), "nodes", "--etcd-endpoints", ep, "--etcd-cacert", ca.CAFile, "--etcd-cert", ca.ClientCert, "--etcd-key", ca.ClientKey)
	if err != nil || !strings.Contains(out+errOut, "No resources found") && !strings.Contains(out, "NAME") {
		t.Fatalf("get nodes with the client certificate: %v %q %q", err, out, errOut)
	}
}
