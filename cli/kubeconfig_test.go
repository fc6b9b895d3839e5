package cli

import (
	"crypto/tls"
	"encoding/pem"
	"fmt"
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

	// kubectl sends a token file whole: of one with several tokens,
	// --embed-token embeds the first (without it berth refuses:
	// TestKubeconfigNeverLeaksATokenUnasked).
	multi := filepath.Join(dir, "tokens")
	_ = os.WriteFile(multi, []byte("tok\nother\n"), 0o600)
	out, errOut, err := runCLI(t, "kubeconfig", "--config", cfg, "--token-file", multi, "--embed-token")
	if kc := loadKubeconfig(t, out); err != nil || kc.AuthInfos["node-t"].Token != "tok" || strings.Contains(out, "other") {
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

// TestKubeconfigNeverLeaksATokenUnasked: with a token file of several
// tokens (kubectl would send the file whole), berth kubeconfig without
// --embed-token refuses, saying what to do, and prints no token, to stdout
// (which `berth kubeconfig > file` puts in a file anyone may read) or to
// -o FILE.
func TestKubeconfigNeverLeaksATokenUnasked(t *testing.T) {
	isolate(t)
	a := newCLIAPI(t)
	multi := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(multi, []byte("admin-secret\nother-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envConfig, agentConfig(t, "node-s", a.url, multi))
	file := filepath.Join(t.TempDir(), "berth.yaml")
	for _, args := range [][]string{{"kubeconfig"}, {"kubeconfig", "-o", file}, {"kubeconfig", "--merge"}} {
		t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "config"))
		out, errOut, err := runCLI(t, args...)
		if err == nil || !strings.Contains(err.Error(), "--embed-token") || !strings.Contains(err.Error(), "2 tokens") {
			t.Errorf("%v: err %v, want a refusal naming --embed-token", args, err)
		}
		for _, leak := range []string{out, errOut, fmt.Sprint(err), readOrEmpty(file), readOrEmpty(os.Getenv("KUBECONFIG"))} {
			if strings.Contains(leak, "secret") {
				t.Errorf("%v: a token leaked: %q", args, leak)
			}
		}
	}
	// Asked for, the first token is embedded; on stdout with a note that -o
	// writes it privately.
	out, errOut, err := runCLI(t, "kubeconfig", "--embed-token")
	if kc := loadKubeconfig(t, out); err != nil || kc.AuthInfos["node-s"].Token != "admin-secret" || !strings.Contains(errOut, "-o FILE") {
		t.Errorf("--embed-token: %v %q\n%s", err, errOut, out)
	}
}

func readOrEmpty(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestKubeconfigFilesArePrivate: a kubeconfig berth writes (-o FILE,
// --merge) is mode 0600, also over an existing file of mode 0644, whose
// other contexts --merge keeps; -o through a symlink writes its target.
func TestKubeconfigFilesArePrivate(t *testing.T) {
	isolate(t)
	a := newCLIAPI(t)
	t.Setenv(envConfig, agentConfig(t, "node-p", a.url, a.tokenFile))
	mode := func(path string) os.FileMode {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "berth.yaml")
	if err := os.WriteFile(file, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "kubeconfig", "--embed-token", "-o", file); err != nil {
		t.Fatal(err)
	}
	if kc, err := clientcmd.LoadFromFile(file); err != nil || kc.AuthInfos["node-p"].Token != "tok" || mode(file) != 0o600 {
		t.Errorf("-o over a 0644 file: mode %04o, %v %+v", mode(file), err, kc)
	}

	target := filepath.Join(dir, "target.yaml")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(target, 0o644)
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "kubeconfig", "--embed-token", "-o", link); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("-o through a symlink replaced the symlink: %v %v", fi, err)
	}
	if kc, err := clientcmd.LoadFromFile(target); err != nil || kc.AuthInfos["node-p"].Token != "tok" || mode(target) != 0o600 {
		t.Errorf("-o through a symlink: target mode %04o, %v", mode(target), err)
	}

	kubeconfig := filepath.Join(dir, "config")
	other := clientcmdapi.NewConfig()
	other.Clusters["prod"] = &clientcmdapi.Cluster{Server: "https://prod.example:6443"}
	other.AuthInfos["prod"] = &clientcmdapi.AuthInfo{TokenFile: "/etc/prod-token"}
	other.Contexts["prod"] = &clientcmdapi.Context{Cluster: "prod", AuthInfo: "prod"}
	other.CurrentContext = "prod"
	if err := clientcmd.WriteToFile(*other, kubeconfig); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(kubeconfig, 0o644)
	t.Setenv("KUBECONFIG", kubeconfig)
	if _, _, err := runCLI(t, "kubeconfig", "--merge", "--embed-token"); err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil || kc.AuthInfos["node-p"].Token != "tok" || kc.Contexts["prod"] == nil || kc.CurrentContext != "prod" || mode(kubeconfig) != 0o600 {
		t.Errorf("--merge into a 0644 kubeconfig: mode %04o, %v %+v", mode(kubeconfig), err, kc)
	}
}
