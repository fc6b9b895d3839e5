package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	berthmanifest "github.com/berth-dev/berth/manifest"
)

// helloManifest is a ContainerManifest as the 2014 salt and container-vm
// manifests wrote them: no id (the seed's file source named the pod after
// the file), env's early "key", volumeMounts' early "path", hostDir and
// emptyDir volume sources, a string port in an http liveness probe.
const helloManifest = `version: v1beta1
containers:
  - name: hello
    image: berth/testapp:1
    command: ["serve"]
    env:
      - key: PORT
        value: "8080"
      - name: MESSAGE
        value: hello from 2014
    ports:
      - name: http
        containerPort: 8080
        hostPort: %d
        hostIP: 127.0.0.1
    volumeMounts:
      - name: config
        path: /config
        readOnly: true
      - name: scratch
        mountPath: /scratch
    livenessProbe:
      type: http
      httpGet:
        path: /healthz
        port: "8080"
      initialDelaySeconds: 1
volumes:
  - name: config
    source:
      hostDir:
        path: %s
  - name: scratch
    source:
      emptyDir: {}
restartPolicy:
  always: {}
`

// sleeperManifest is in the style of the 2014 salt manifests (v1beta2, an id).
const sleeperManifest = `version: v1beta2
id: legacy-sleeper
containers:
  - name: sleeper
    image: berth/testapp:1
    command: ["sleep"]
`

// TestLegacyManifestFileRuns runs 2014 .manifest files on the real engine:
// one without an id under the seed kubelet's name for its file, one
// v1beta2 with an id; berth validate accepts the directory; deleting a file
// removes its pod.
func TestLegacyManifestFileRuns(t *testing.T) {
	config := t.TempDir()
	if err := os.WriteFile(filepath.Join(config, "motd"), []byte("from the host"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(config, 0o755); err != nil {
		t.Fatal(err)
	}
	b := startBerth(t, Options{})
	hostPort := freePort(t)
	writeFile(t, b.Pods, "hello.manifest", fmt.Sprintf(helloManifest, hostPort, config))
	writeFile(t, b.Pods, "sleeper.manifest", sleeperManifest)

	name := berthmanifest.LegacyPodName(filepath.Join(b.Pods, "hello.manifest"))
	if !strings.HasPrefix(name, "hellomanifest") || len(name) != len("hellomanifest")+30 {
		t.Fatalf("name %q", name)
	}
	waitPodRunning(t, b.Node, name, "hello")
	waitPodRunning(t, b.Node, "legacy-sleeper", "sleeper")

	base := fmt.Sprintf("http://127.0.0.1:%d", hostPort)
	httpWant(t, base+"/", "hello from 2014")
	httpWant(t, base+"/env?name=PORT", "8080")
	httpWant(t, base+"/file?path=/config/motd", "from the host")

	pod, err := b.Pod(name)
	if err != nil || pod == nil {
		t.Fatalf("GET /pods/default/%s: %v %v", name, pod, err)
	}
	c := pod.Spec.Containers[0]
	if len(c.Args) != 1 || c.Args[0] != "serve" || c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Port.IntValue() != 8080 ||
		!c.VolumeMounts[0].ReadOnly || pod.Spec.Volumes[0].HostPath == nil || pod.Spec.Volumes[1].EmptyDir == nil {
		t.Errorf("converted pod %+v", pod.Spec)
	}

	out, errOut, err := berthCLI(t, "validate", b.Pods)
	if err != nil || out != "2 pod(s) valid\n" {
		t.Errorf("berth validate %s: %q %q %v", b.Pods, out, errOut, err)
	}

	removeFile(t, b.Pods, "hello.manifest")
	waitPodGone(t, b.Node, name)
	waitPodRunning(t, b.Node, "legacy-sleeper", "sleeper")
}
