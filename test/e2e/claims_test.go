package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/volume"

	"github.com/berth-dev/berth/runtime"
)

const claimManifest = `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`

// claimPod mounts claim data at /data; its init container writes
// marker=content there first when content is set.
func claimPod(hostPort int, content string, readOnly bool) string {
	init := ""
	if content != "" {
		init = fmt.Sprintf(`  initContainers:
    - name: writer
      image: %q
      args: [report, --write, /data/marker=%s]
      volumeMounts: [{name: data, mountPath: /data}]
`, testImage, content)
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  terminationGracePeriodSeconds: 2
%s  containers:
    - name: web
      image: %q
      args: [serve]
      env: [{name: PORT, value: "8080"}]
      ports: [{containerPort: 8080, hostPort: %d, hostIP: 127.0.0.1}]
      volumeMounts: [{name: data, mountPath: /data}]
  volumes:
    - name: data
      persistentVolumeClaim: {claimName: data, readOnly: %v}
`, init, testImage, hostPort, readOnly)
}

// TestClaimDataOutlivesPods: a claim's volume is made by its first pod,
// kept when the pod is deleted, found again by the next pod, listed by
// berth get pvc, and deleted by berth delete pvc only once no pod uses it.
func TestClaimDataOutlivesPods(t *testing.T) {
	need(t)
	e := startCLIEnv(t)
	b := e.b
	port := freePort(t)
	writeFile(t, b.Pods, "claim.yaml", claimManifest)
	writeFile(t, b.Pods, "db.yaml", claimPod(port, "first-generation", false))
	waitPodRunning(t, b.Node, "db", "web")
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	httpWant(t, base+"/file?path=/data/marker", "first-generation")

	vol := runtime.ClaimVolumeName("file", "default", "data", b.Node)
	t.Cleanup(func() { _ = cli().VolumeRemove(context.Background(), vol, true) })
	out, errOut, err := berthCLI(t, e.args("get", "pvc")...)
	if err != nil {
		t.Fatalf("get pvc: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "NAMESPACE   NAME   STATUS   VOLUME") {
		t.Errorf("get pvc header:\n%s", out)
	}
	if f := strings.Fields(lineWith(out, " data ")); len(f) < 6 || f[2] != "Bound" || f[3] != vol || f[4] != "1Gi" || f[5] != "RWO" {
		t.Errorf("get pvc row %q, want Bound %s 1Gi RWO", lineWith(out, " data "), vol)
	}
	if _, errOut, err := berthCLI(t, e.args("delete", "pvc", "data")...); err == nil || !strings.Contains(errOut, "used by pod default/db") {
		t.Fatalf("delete pvc of a running pod: %v %s", err, errOut)
	}

	// The pod goes, its data stays; the next pod finds it (read-only).
	removeFile(t, b.Pods, "db.yaml")
	waitPodGone(t, b.Node, "db")
	if _, err := cli().VolumeInspect(context.Background(), vol); err != nil {
		t.Fatalf("the claim's volume went with its pod: %v", err)
	}
	writeFile(t, b.Pods, "db.yaml", claimPod(port, "", true))
	ids := waitPodRunning(t, b.Node, "db", "web")
	httpWant(t, base+"/file?path=/data/marker", "first-generation")
	for _, m := range inspect(t, ids["web"]).Mounts {
		if m.Destination == "/data" && m.RW {
			t.Error("readOnly claim mounted read-write")
		}
	}

	// Without a user, delete pvc removes the data; the declared claim stays
	// Pending.
	removeFile(t, b.Pods, "db.yaml")
	waitPodGone(t, b.Node, "db")
	if out, errOut, err := berthCLI(t, e.args("delete", "pvc", "data")...); err != nil || !strings.Contains(out, `persistentvolumeclaim "data" deleted`) {
		t.Fatalf("delete pvc: %v %s %s", err, out, errOut)
	}
	list, err := cli().VolumeList(context.Background(), volume.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range list.Volumes {
		if v.Name == vol {
			t.Fatal("delete pvc left the volume")
		}
	}
	out, _, _ = berthCLI(t, e.args("get", "pvc")...)
	if f := strings.Fields(lineWith(out, " data ")); len(f) < 3 || f[2] != "Pending" {
		t.Errorf("after delete, get pvc:\n%s", out)
	}
	if _, errOut, err := berthCLI(t, e.args("delete", "pvc", "data")...); err == nil || !strings.Contains(errOut, "404") {
		t.Errorf("delete pvc without a volume: %v %s", err, errOut)
	}
}

// lineWith is the first line of out containing s.
func lineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
