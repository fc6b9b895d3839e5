package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/internal/testutil"
)

// objectsPod uses ConfigMap app-config (a volume, a key in env, envFrom)
// and Secret app-secret (a volume, a key in env), and a downwardAPI volume
// of its labels; web answers on hostPort.
func objectsPod(hostPort int, tier string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: objects
  labels: {app: objects, tier: %s}
spec:
  terminationGracePeriodSeconds: 2
  containers:
    - name: web
      image: %q
      args: [serve]
      env:
        - {name: PORT, value: "8080"}
        - name: MODE
          valueFrom: {configMapKeyRef: {name: app-config, key: mode}}
        - name: PASSWORD
          valueFrom: {secretKeyRef: {name: app-secret, key: password}}
      envFrom:
        - {prefix: CFG_, configMapRef: {name: app-config}}
      ports: [{containerPort: 8080, hostPort: %d, hostIP: 127.0.0.1}]
      volumeMounts:
        - {name: config, mountPath: /etc/config}
        - {name: secret, mountPath: /etc/secret}
        - {name: podinfo, mountPath: /etc/podinfo}
  volumes:
    - name: config
      configMap: {name: app-config}
    - name: secret
      secret: {secretName: app-secret, defaultMode: 0400}
    - name: podinfo
      downwardAPI:
        items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]
`, tier, testImage, hostPort)
}

func configMapYAML(mode string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-config}\ndata: {mode: %s, greeting: hello}\n", mode)
}

const secretYAML = `apiVersion: v1
kind: Secret
metadata: {name: app-secret}
type: Opaque
stringData: {password: s3cr3t-e2e-value}
`

func get(tb testing.TB, url string) (int, string) {
	tb.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestConfigMapsAndSecrets runs a pod using a ConfigMap and a Secret from
// the pods directory on the real engine: it waits for the missing Secret
// as the kubelet does, starts once the Secret's file lands, sees a
// ConfigMap update and a label edit in its files without a restart, keeps
// the Secret on a tmpfs and out of the API, and leaves no Secret file
// behind when deleted.
func TestConfigMapsAndSecrets(t *testing.T) {
	need(t)
	b := startBerth(t, Options{})
	port := freePort(t)
	writeFile(t, b.Pods, "objects.yaml", objectsPod(port, "one")+"---\n"+configMapYAML("fast"))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)

	waitFor(t, waitLong, "web waits for app-secret", func() (bool, string) {
		p, err := b.Pod("objects")
		if err != nil || p == nil {
			return false, fmt.Sprint(err)
		}
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; cs.Name == "web" && w != nil {
				return w.Reason == "CreateContainerConfigError" && strings.Contains(w.Message, `secret "app-secret" not found`), w.Reason + ": " + w.Message
			}
		}
		return false, fmt.Sprintf("%+v", p.Status.ContainerStatuses)
	})

	// The Secret arrives in a file of its own (mode 0600): web starts.
	tmp := filepath.Join(b.Pods, ".secret.tmp")
	if err := os.WriteFile(tmp, []byte(secretYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(b.Pods, "secret.yaml")); err != nil {
		t.Fatal(err)
	}
	ids := waitPodRunning(t, b.Node, "objects", "web")
	httpWant(t, base+"/env?name=MODE", "fast")
	httpWant(t, base+"/env?name=PASSWORD", "s3cr3t-e2e-value")
	httpWant(t, base+"/env?name=CFG_greeting", "hello")
	httpWant(t, base+"/file?path=/etc/config/mode", "fast")
	httpWant(t, base+"/file?path=/etc/secret/password", "s3cr3t-e2e-value")
	httpWant(t, base+"/file?path=/etc/podinfo/labels", "app=\"objects\"\ntier=\"one\"")

	// The Secret is on a tmpfs, the ConfigMap on disk; both read-only.
	ins := inspect(t, ids["web"])
	for _, m := range ins.Mounts {
		switch m.Destination {
		case "/etc/secret", "/etc/config":
			if m.RW {
				t.Errorf("%s is mounted read-write", m.Destination)
			}
			var st unix.Statfs_t
			if err := unix.Statfs(m.Source, &st); err != nil {
				t.Fatal(err)
			}
			if onTmpfs := st.Type == unix.TMPFS_MAGIC; onTmpfs != (m.Destination == "/etc/secret") {
				t.Errorf("%s from %s: on tmpfs %v", m.Destination, m.Source, onTmpfs)
			}
		}
	}

	// A ConfigMap update and a label edit reach the files in place.
	writeFile(t, b.Pods, "objects.yaml", objectsPod(port, "two")+"---\n"+configMapYAML("slow"))
	httpWant(t, base+"/file?path=/etc/config/mode", "slow")
	httpWant(t, base+"/file?path=/etc/podinfo/labels", "app=\"objects\"\ntier=\"two\"")
	httpWant(t, base+"/env?name=MODE", "fast") // env does not follow, as in the kubelet
	assertStable(t, b.Node, "objects", ids, 500*time.Millisecond)

	// The Secret's value shows nowhere in the API.
	for _, path := range []string{"/pods", "/pods/default/objects", "/events", "/metrics"} {
		_, body := getAPI(t, b, path)
		if strings.Contains(body, "s3cr3t-e2e-value") {
			t.Errorf("GET %s shows the Secret's value", path)
		}
	}
	if strings.Contains(b.LogText(), "s3cr3t-e2e-value") {
		t.Error("the log shows the Secret's value")
	}

	// Deleted, the pod takes its Secret's files with it.
	dir := filepath.Join(b.Root, "pods")
	removeFile(t, b.Pods, "objects.yaml")
	waitPodGone(t, b.Node, "objects")
	waitFor(t, waitLong, "pod directories removed", func() (bool, string) {
		ents, _ := os.ReadDir(dir)
		return len(ents) == 0, fmt.Sprint(len(ents), " left")
	})
}

func getAPI(tb testing.TB, b *Berth, path string) (int, string) {
	tb.Helper()
	return get(tb, b.URL(path))
}

// TestImagePullSecrets: a pod's image from a registry that wants a login
// fails to pull without its imagePullSecret, and pulls once the
// kubernetes.io/dockerconfigjson Secret it names arrives.
func TestImagePullSecrets(t *testing.T) {
	need(t)
	b := startBerth(t, Options{})
	bin, err := os.ReadFile(testappBin)
	if err != nil {
		t.Fatal(err)
	}
	reg := testutil.NewRegistry(t)
	reg.RequireAuth("puller", "pull-pass-e2e")
	unique := []byte(runID + "-" + randHex(8))
	ref, _ := reg.AddImage(t, "berth-e2e/private", runID, map[string][]byte{"/testapp": bin, "/unique": unique}, []string{"/testapp"})
	t.Cleanup(func() { _, _ = cli().ImageRemove(context.Background(), ref, image.RemoveOptions{Force: true}) })
	pod := strings.Replace(sleeper("private"), testImage, ref, 1) + "  imagePullSecrets: [{name: regcred}]\n"
	writeFile(t, b.Pods, "private.yaml", pod)
	status(t, b, "private", "the pull refused without a login", func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Waiting != nil && (cs[0].State.Waiting.Reason == "ErrImagePull" || cs[0].State.Waiting.Reason == "ImagePullBackOff")
	})
	secret := fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: regcred}
type: kubernetes.io/dockerconfigjson
stringData:
  .dockerconfigjson: '{"auths": {"%s": {"username": "puller", "password": "pull-pass-e2e"}}}'
`, reg.Host())
	tmp := filepath.Join(b.Pods, ".regcred.tmp")
	if err := os.WriteFile(tmp, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(b.Pods, "regcred.yaml")); err != nil {
		t.Fatal(err)
	}
	waitPodRunning(t, b.Node, "private", "app")
	if strings.Contains(b.LogText(), "pull-pass-e2e") {
		t.Error("the log shows the registry password")
	}
}

// TestEtcdObjects: berth apply writes a pod with its ConfigMap and Secret
// to a node's etcd keys; the node runs the pod with them, and a ConfigMap
// key written to etcd later reaches the pod's file.
func TestEtcdObjects(t *testing.T) {
	need(t)
	e := testutil.StartEtcd(t)
	b := startBerth(t, Options{Env: clusterEnv(e.ClientURL)})
	port := freePort(t)
	f := filepath.Join(t.TempDir(), "app.yaml")
	manifest := objectsPod(port, "etcd") + "---\n" + configMapYAML("fast") + "---\n" + secretYAML
	if err := os.WriteFile(f, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := berthCLI(t, "apply", "-f", f, "--node", b.Node, "--etcd-endpoints", e.ClientURL)
	if err != nil {
		t.Fatalf("apply: %v\n%s%s", err, out, errOut)
	}
	for _, want := range []string{"configmap/app-config configured", "secret/app-secret configured", "pod/objects configured"} {
		if !strings.Contains(out, want) {
			t.Errorf("apply output lacks %q:\n%s", want, out)
		}
	}
	waitPodRunning(t, b.Node, "objects", "web")
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	httpWant(t, base+"/env?name=PASSWORD", "s3cr3t-e2e-value")
	httpWant(t, base+"/file?path=/etc/config/mode", "fast")
	e.Put("/registry/hosts/"+b.Node+"/configmaps/default/app-config", configMapYAML("slow"))
	httpWant(t, base+"/file?path=/etc/config/mode", "slow")
}
