package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
)

// TestSelfSignedServingCert is README's flow with server.tls.self_signed
// and a token: berth writes its certificate under root_dir/pki at its
// first start and serves https with it; berth kubeconfig (from the
// agent's config file) embeds it as the CA; client-go with that
// kubeconfig lists pods, execs and creates a pod, sending the token; a
// restart reuses the certificate, so the kubeconfig keeps working; the
// real kubectl gets pods and applies one.
func TestSelfSignedServingCert(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("e2e-"+randHex(8)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startBerth(t, Options{SelfSigned: true, Env: []string{"BERTH_SERVER_TOKEN_FILE=" + tokenFile, "BERTH_SOURCES_PUSH_ENABLED=true"}})
	if !strings.HasPrefix(b.URL(""), "https://") {
		t.Fatalf("berth at %s", b.URL(""))
	}
	if got := strings.Count(b.LogText(), "generated a self-signed serving certificate"); got != 1 {
		t.Errorf("the log tells %d generations, want 1:\n%s", got, b.LogText())
	}
	pki := filepath.Join(b.Root, "pki")
	for path, want := range map[string]os.FileMode{pki: os.ModeDir | 0o700, filepath.Join(pki, "berth-serving.key"): 0o600} {
		if fi, err := os.Lstat(path); err != nil || fi.Mode() != want {
			t.Errorf("%s: %v %v, want mode %v", path, fi.Mode(), err, want)
		}
	}
	certPEM, err := os.ReadFile(b.CA)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, b.Pods, "ss.yaml", podYAML("ss", Ctr{Name: "app", Args: []string{"sleep"}}))
	waitPodRunning(t, b.Node, "ss", "app")

	// The agent's configuration file as README shows it.
	u, _ := url.Parse(b.URL(""))
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, filepath.Dir(cfg), "config.yaml", fmt.Sprintf("node_name: %s\nroot_dir: %s\nserver:\n  address: 127.0.0.1\n  port: %s\n  token_file: %s\n  tls:\n    self_signed: true\n",
		b.Node, b.Root, u.Port(), tokenFile))
	env := []string{"BERTH_CONFIG=" + cfg}
	if out, errOut, err := berthCLIEnv(t, env, "get", "pods", "ss", "-o", "name"); err != nil || out != "pod/ss\n" {
		t.Errorf("berth get pods ss over the self-signed https: %v %q %q", err, out, errOut)
	}
	kubeconfig, errOut, err := berthCLIEnv(t, env, "kubeconfig")
	if err != nil || errOut != "" {
		t.Fatalf("berth kubeconfig: %v %q\n%s", err, errOut, kubeconfig)
	}
	kc, err := clientcmd.Load([]byte(kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	if c := kc.Clusters[b.Node]; c == nil || c.Server != b.URL("") || !bytes.Equal(c.CertificateAuthorityData, certPEM) {
		t.Fatalf("cluster %+v, want %s with the certificate of %s", c, b.URL(""), b.CA)
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig([]byte(kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	listsRunning := func(what, name string) {
		t.Helper()
		waitFor(t, waitLong, what, func() (bool, string) {
			l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, p := range l.Items {
				if p.Name == name {
					return p.Status.Phase == v1.PodRunning, string(p.Status.Phase)
				}
			}
			return false, fmt.Sprintf("%d pods, no %s", len(l.Items), name)
		})
	}
	listsRunning("client-go lists ss Running through the kubeconfig", "ss")

	// Neither the token nor the CA may be missing: the check above is not
	// passing by accident.
	anon := rest.CopyConfig(rc)
	anon.BearerToken, anon.BearerTokenFile = "", ""
	if _, err := kubernetes.NewForConfigOrDie(anon).CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("list without the token: %v, want 401", err)
	}
	noCA := rest.CopyConfig(rc)
	noCA.TLSClientConfig.CAData = nil
	if _, err := kubernetes.NewForConfigOrDie(noCA).CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("list without the CA: %v, want a certificate error", err)
	}

	// exec (admin only) over WebSocket, the token sent.
	q := url.Values{"command": {"/testapp", "exit", "3"}, "container": {"app"}, "stdout": {"true"}, "stderr": {"true"}}
	ex, err := remotecommand.NewWebSocketExecutor(rc, "GET", rc.Host+"/api/v1/namespaces/default/pods/ss/exec?"+q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	var out, stderr bytes.Buffer
	ectx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = ex.StreamWithContext(ectx, remotecommand.StreamOptions{Stdout: &out, Stderr: &stderr})
	cancel()
	var code utilexec.CodeExitError
	if !errors.As(err, &code) || code.Code != 3 || out.String() != "testapp exit starting\n" || stderr.String() != "testapp exit stderr\n" {
		t.Errorf("exec exit 3: %v %q %q", err, out.String(), stderr.String())
	}

	// A write: the pod runs on the engine.
	grace := int64(2)
	created := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ss-created"}, Spec: v1.PodSpec{TerminationGracePeriodSeconds: &grace,
		Containers: []v1.Container{{Name: "main", Image: testImage, Args: []string{"sleep"}}}}}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, created, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create through the kubeconfig: %v", err)
	}
	waitPodRunning(t, b.Node, "ss-created", "main")

	// A restart reuses the certificate: the kubeconfig keeps working (its
	// server moved to the harness's new port; its CA is the old one).
	oldURL := b.URL("")
	b.Stop(t)
	b.Start(t)
	kubeconfig = strings.ReplaceAll(kubeconfig, "server: "+oldURL, "server: "+b.URL(""))
	if rc, err = clientcmd.RESTConfigFromKubeConfig([]byte(kubeconfig)); err != nil || rc.Host != b.URL("") {
		t.Fatalf("the kubeconfig with the new port: %v %v", rc, err)
	}
	cs = kubernetes.NewForConfigOrDie(rc)
	if again, _ := os.ReadFile(b.CA); !bytes.Equal(again, certPEM) {
		t.Error("the restart replaced the certificate")
	}
	if got := strings.Count(b.LogText(), "generated a self-signed serving certificate"); got != 1 {
		t.Errorf("the log tells %d generations after the restart, want 1", got)
	}
	listsRunning("client-go lists ss-created Running after the restart", "ss-created")

	// The real kubectl with the same kubeconfig: get pods, apply.
	bin := kubectlBinary(t)
	dir := t.TempDir()
	writeFile(t, dir, "berth.yaml", kubeconfig)
	kubectlGetsPod(t, bin, filepath.Join(dir, "berth.yaml"), "ss")
	writeFile(t, dir, "applied.yaml", podYAML("ss-applied", Ctr{Name: "main", Args: []string{"sleep"}}))
	actx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(actx, bin, "--kubeconfig", filepath.Join(dir, "berth.yaml"), "apply", "-f", filepath.Join(dir, "applied.yaml"))
	cmd.Env = append(berthlessEnv(), "HOME="+t.TempDir(), "KUBECONFIG=")
	if outb, err := cmd.CombinedOutput(); err != nil || !regexp.MustCompile(`(?m)^pod/ss-applied created$`).Match(outb) {
		t.Fatalf("kubectl apply: %v\n%s", err, outb)
	}
	waitPodRunning(t, b.Node, "ss-applied", "main")
}
