package cli

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/servingcert"
)

// An agent with server.tls.self_signed and a token: the client commands
// and berth kubeconfig find it over https, trusting the certificate the
// agent wrote under root_dir/pki, and client-go sends the token.
func TestKubeconfigSelfSigned(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	_ = os.WriteFile(token, []byte("tok\n"), 0o600)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	u := "https://" + srv.Listener.Addr().String()
	cfg := agentConfig(t, "node-s", u, token, "  tls:\n    self_signed: true", "root_dir: "+root)

	// Before the agent's first start, there is no certificate to trust.
	_, _, err := runCLI(t, "kubeconfig", "--config", cfg)
	want := "the server's certificate (the certificate of server.tls.self_signed under root_dir/pki, the agent's configuration " + cfg +
		"): open " + root + "/pki/berth-serving.crt: no such file or directory (berth writes it when it starts: start the agent first)"
	if err == nil || err.Error() != want {
		t.Fatalf("kubeconfig before the agent started: %v\nwant %s", err, want)
	}

	sans, _ := servingcert.Hosts("node-s", "127.0.0.1", net.InterfaceAddrs)
	res, err := servingcert.Ensure(servingcert.Options{Dir: filepath.Join(root, "pki"), Name: "node-s", SANs: sans, Clock: clock.RealClock{}})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(res.CertFile, res.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	srv.StartTLS()

	out, errOut, err := runCLI(t, "kubeconfig", "--config", cfg)
	if err != nil || errOut != "" {
		t.Fatalf("kubeconfig: %v %q", err, errOut)
	}
	kc := loadKubeconfig(t, out)
	c := kc.Clusters["node-s"]
	certPEM, _ := os.ReadFile(res.CertFile)
	if c == nil || c.Server != u || string(c.CertificateAuthorityData) != string(certPEM) {
		t.Fatalf("cluster %+v, want %s with the self-signed certificate as CA", c, u)
	}
	if code := getThrough(t, kc, "/"); code != http.StatusOK {
		t.Errorf("GET / through the kubeconfig: %d, want 200 (the token sent over https)", code)
	}
	var l locator
	l.configFile = cfg
	hc, err := (&apiClient{l}).httpClient(0)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := hc.Get(u); err != nil {
		t.Errorf("the client commands over the self-signed https: %v", err)
	} else {
		resp.Body.Close()
	}
	rc, err := (&apiClient{l}).restConfig()
	if err != nil || string(rc.TLSClientConfig.CAData) != string(certPEM) || rc.Host != u {
		t.Errorf("client-go config: %v %s", err, rc.Host)
	}
}
