package cli

import (
	"crypto/tls"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// getThrough GETs path on the server of kubeconfig kc's current context,
// as client-go sends it (its TLS and token), and returns the status code.
func getThrough(t *testing.T, kc *clientcmdapi.Config, path string) int {
	t.Helper()
	rc, err := clientcmd.NewDefaultClientConfig(*kc, nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(strings.TrimRight(rc.Host, "/") + path)
	if err != nil {
		t.Fatalf("GET %s through the kubeconfig: %v", path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func loadKubeconfig(t *testing.T, out string) *clientcmdapi.Config {
	t.Helper()
	kc, err := clientcmd.Load([]byte(out))
	if err != nil {
		t.Fatalf("kubeconfig %q: %v", out, err)
	}
	return kc
}

func TestKubeconfig(t *testing.T) {
	isolate(t)
	a := newCLIAPI(t)
	t.Setenv(envConfig, agentConfig(t, "node-a", a.url, a.tokenFile))
	out, errOut, err := runCLI(t, "kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	kc := loadKubeconfig(t, out)
	ctx := kc.Contexts["node-a"]
	if kc.CurrentContext != "node-a" || ctx == nil || ctx.Namespace != "default" || ctx.Cluster != "node-a" || ctx.AuthInfo != "node-a" {
		t.Fatalf("context: current %q %+v", kc.CurrentContext, ctx)
	}
	if c := kc.Clusters["node-a"]; c == nil || c.Server != a.url || len(c.CertificateAuthorityData) != 0 {
		t.Errorf("cluster %+v, want server %s", c, a.url)
	}
	if u := kc.AuthInfos["node-a"]; u == nil || u.TokenFile != a.tokenFile || u.Token != "" {
		t.Errorf("user %+v, want tokenFile %s and no token", u, a.tokenFile)
	}
	if strings.Contains(out, "tok\n") {
		t.Errorf("the token is in the kubeconfig:\n%s", out)
	}
	// client-go (kubectl) sends no token over http://: the warning says so.
	if !strings.Contains(errOut, "send no token to an http:// server") {
		t.Errorf("no warning about the token over http: %q", errOut)
	}
	if code := getThrough(t, kc, "/pods"); code != http.StatusUnauthorized {
		t.Errorf("client-go sent the token over http (%d): the warning is wrong", code)
	}

	out, _, err = runCLI(t, "kubeconfig", "--embed-token", "--context", "mine")
	if kc := loadKubeconfig(t, out); err != nil || kc.CurrentContext != "mine" || kc.AuthInfos["mine"].Token != "tok" || kc.AuthInfos["mine"].TokenFile != "" {
		t.Errorf("--embed-token --context mine: %v\n%s", err, out)
	}

	file := filepath.Join(t.TempDir(), "berth.yaml")
	if _, _, err := runCLI(t, "kubeconfig", "-o", file); err != nil {
		t.Fatal(err)
	}
	if kc, err := clientcmd.LoadFromFile(file); err != nil || kc.Clusters["node-a"].Server != a.url {
		t.Errorf("-o %s: %v %+v", file, err, kc)
	}

	// An open loopback berth: no user credentials, no warning.
	open := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer open.Close()
	out, errOut, err = runCLI(t, "kubeconfig", "--config", agentConfig(t, "node-o", open.URL, ""))
	if kc := loadKubeconfig(t, out); err != nil || errOut != "" || kc.AuthInfos["node-o"].TokenFile != "" || kc.AuthInfos["node-o"].Token != "" {
		t.Errorf("open berth: %v %q\n%s", err, errOut, out)
	} else if code := getThrough(t, kc, "/pods"); code != http.StatusOK {
		t.Errorf("open berth through the kubeconfig: %d", code)
	}
}

func TestKubeconfigTLS(t *testing.T) {
	isolate(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	cert := filepath.Join(dir, "cert.pem")
	_ = os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)
	token := filepath.Join(dir, "token")
	_ = os.WriteFile(token, []byte("tok\n"), 0o600)
	cfg := agentConfig(t, "node-t", srv.URL, token, "  tls:\n    cert_file: "+cert+"\n    key_file: "+filepath.Join(dir, "key.pem"))

	out, _, err := runCLI(t, "kubeconfig", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	kc := loadKubeconfig(t, out)
	c := kc.Clusters["node-t"]
	if c == nil || c.Server != srv.URL || !strings.HasPrefix(c.Server, "https://") || len(c.CertificateAuthorityData) == 0 {
		t.Fatalf("cluster %+v, want %s with the certificate as CA", c, srv.URL)
	}
	if u := kc.AuthInfos["node-t"]; u.TokenFile != token || u.Token != "" {
		t.Errorf("user %+v, want tokenFile %s", u, token)
	}
	if code := getThrough(t, kc, "/"); code != http.StatusOK {
		t.Errorf("GET / over TLS through the kubeconfig: %d", code)
	}

	// kubectl sends a token file whole: one with several tokens is
	// embedded (its first), with a note.
	multi := filepath.Join(dir, "tokens")
	_ = os.WriteFile(multi, []byte("tok\nother\n"), 0o600)
	out, errOut, err := runCLI(t, "kubeconfig", "--config", cfg, "--token-file", multi)
	if kc := loadKubeconfig(t, out); err != nil || kc.AuthInfos["node-t"].Token != "tok" || !strings.Contains(errOut, "holds 2 tokens") {
		t.Errorf("two tokens: %v %q\n%s", err, errOut, out)
	} else if code := getThrough(t, kc, "/"); code != http.StatusOK {
		t.Errorf("GET / with the embedded first token: %d", code)
	}
	out, _, err = runCLI(t, "kubeconfig", "--config", cfg, "--certificate-authority", token)
	if kc := loadKubeconfig(t, out); err != nil || string(kc.Clusters["node-t"].CertificateAuthorityData) != "tok\n" {
		t.Errorf("--certificate-authority: %v\n%s", err, out)
	}
	if _, _, err := runCLI(t, "kubeconfig", "--config", cfg, "--certificate-authority", "/nonexistent"); err == nil || !strings.Contains(err.Error(), "--certificate-authority") {
		t.Errorf("--certificate-authority /nonexistent: %v", err)
	}
	// The client commands trust the same certificate.
	var l locator
	l.configFile = cfg
	hc, err := (&apiClient{l}).httpClient(0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hc.Get(srv.URL); err != nil {
		t.Errorf("the client commands over TLS: %v", err)
	}
	if _, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{}}}).Get(srv.URL); err == nil {
		t.Error("the test server's certificate is trusted without its CA: the test proves nothing")
	}
}

func TestKubeconfigMerge(t *testing.T) {
	isolate(t)
	a := newCLIAPI(t)
	kubeconfig := filepath.Join(t.TempDir(), "config")
	other := clientcmdapi.NewConfig()
	other.Clusters["prod"] = &clientcmdapi.Cluster{Server: "https://prod.example:6443"}
	other.AuthInfos["prod"] = &clientcmdapi.AuthInfo{Token: "prod-token"}
	other.Contexts["prod"] = &clientcmdapi.Context{Cluster: "prod", AuthInfo: "prod"}
	other.CurrentContext = "prod"
	if err := clientcmd.WriteToFile(*other, kubeconfig); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	t.Setenv(envConfig, agentConfig(t, "node-m", a.url, a.tokenFile))
	_, errOut, err := runCLI(t, "kubeconfig", "--merge")
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if kc.CurrentContext != "prod" || kc.Contexts["prod"] == nil || kc.AuthInfos["prod"].Token != "prod-token" ||
		kc.Contexts["node-m"] == nil || kc.Clusters["node-m"].Server != a.url || kc.AuthInfos["node-m"].TokenFile != a.tokenFile {
		t.Fatalf("merged: current %q contexts %v clusters %v", kc.CurrentContext, kc.Contexts, kc.Clusters)
	}
	if !strings.Contains(errOut, "kubectl --context node-m get pods") {
		t.Errorf("stderr %q", errOut)
	}

	// Into no kubeconfig at all: the context becomes the current one.
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "new", "config"))
	if _, _, err := runCLI(t, "kubeconfig", "--merge"); err != nil {
		t.Fatal(err)
	}
	if kc, err := clientcmd.LoadFromFile(os.Getenv("KUBECONFIG")); err != nil || kc.CurrentContext != "node-m" {
		t.Errorf("merge into a new file: %v %+v", err, kc)
	}
	if _, _, err := runCLI(t, "kubeconfig", "--merge", "-o", "x"); err == nil {
		t.Error("--merge with -o accepted")
	}
}
