package prometheus

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/runtime"
)

// testImage holds test/testapp, rebuilt by every startBerth.
const testImage = "berth/testapp:prometheus"

// berth is a running berth binary with cAdvisor on, a bearer token, and one
// pod Pod whose container "app" has an exec liveness probe every second.
type berth struct {
	Port      int
	Token     string
	TokenFile string
	Pod       string
	PodUID    string
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// getAuth GETs url with the berth's token.
func (b *berth) getAuth(path string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", b.Port, path), nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+b.Token)
	return do(req)
}

// buildTestImage builds test/testapp into testImage on the engine d,
// removing the image it replaces.
func buildTestImage(t *testing.T, d *runtime.Docker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := testutil.Build(t, t.TempDir(), "./test/testapp", "testapp")
	old, _ := d.Client().ImageInspect(ctx, testImage)
	if err := d.BuildImage(ctx, testImage, bin, "/testapp", []string{"/testapp"}); err != nil {
		t.Fatal(err)
	}
	if cur, err := d.Client().ImageInspect(ctx, testImage); err == nil && old.ID != "" && old.ID != cur.ID {
		_, _ = d.Client().ImageRemove(ctx, old.ID, image.RemoveOptions{})
	}
}

// removeNode removes every container berth made for node (berth leaves
// pods running when it stops).
func removeNode(t *testing.T, d *runtime.Docker, node string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	list, err := d.Client().ContainerList(ctx, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", runtime.LabelNode+"="+node))})
	if err != nil {
		t.Errorf("cleanup: list containers of node %s: %v", node, err)
		return
	}
	for _, c := range list {
		if err := d.RemoveContainer(ctx, c.ID); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}
}

// startBerth runs the real binary on the real engine with the test pod and
// waits until it runs and both its resource and probe series exist.
func startBerth(t *testing.T) *berth {
	t.Helper()
	d, err := runtime.NewDocker("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	pctx, pcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer pcancel()
	if err := d.Ping(pctx); err != nil {
		t.Fatalf("Docker engine unreachable (is dockerd running?): %v", err)
	}
	buildTestImage(t, d)
	bin := testutil.Build(t, t.TempDir(), ".", "berth")

	b := &berth{Port: testutil.FreePort(t), Token: randHex(16), Pod: "prom-" + randHex(3)}
	node := "prom-" + randHex(4)
	b.TokenFile = filepath.Join(t.TempDir(), "token")
	pods := t.TempDir()
	if err := os.WriteFile(b.TokenFile, []byte(b.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: app
      image: %q
      args: ["sleep"]
      livenessProbe:
        exec:
          command: ["/testapp", "getenv", "HOME"]
        periodSeconds: 1
`, b.Pod, testImage)
	if err := os.WriteFile(filepath.Join(pods, b.Pod+".yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "run")
	cmd.Env = append(os.Environ(), "BERTH_NODE_NAME="+node, "BERTH_ROOT_DIR="+t.TempDir(),
		"BERTH_SOURCES_FILE_PATH="+pods, "BERTH_SOURCES_FILE_RESCAN=1s", "BERTH_SERVER_ADDRESS=127.0.0.1",
		fmt.Sprintf("BERTH_SERVER_PORT=%d", b.Port), "BERTH_SERVER_TOKEN_FILE="+b.TokenFile,
		"BERTH_CADVISOR_ENABLED=true", "BERTH_CADVISOR_HOUSEKEEPING=1s")
	var logs bytes.Buffer
	cmd.Stderr = &logs
	cmd.Stdout = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("berth log:\n%s", logs.String())
		}
		removeNode(t, d, node)
	})

	waitFor(t, 60*time.Second, "berth /readyz", func() (bool, string) {
		code, body, err := get(fmt.Sprintf("http://127.0.0.1:%d/readyz", b.Port))
		return err == nil && code == 200, fmt.Sprint(code, string(body), err)
	})
	waitFor(t, 90*time.Second, "the pod running", func() (bool, string) {
		code, body, err := b.getAuth("/pods/default/" + b.Pod)
		if err != nil || code != 200 {
			return false, fmt.Sprint(code, string(body), err)
		}
		var p v1.Pod
		if err := json.Unmarshal(body, &p); err != nil {
			return false, err.Error()
		}
		b.PodUID = string(p.UID)
		return p.Status.Phase == v1.PodRunning && b.PodUID != "", string(p.Status.Phase)
	})
	mem := fmt.Sprintf(`container_memory_working_set_bytes{container="app",namespace="default",pod=%q} `, b.Pod)
	waitFor(t, 60*time.Second, "the pod's container in /metrics/resource", func() (bool, string) {
		code, body, err := b.getAuth("/metrics/resource")
		return err == nil && code == 200 && bytes.Contains(body, []byte(mem)) && bytes.Contains(body, []byte("\nresource_scrape_error 0\n")),
			fmt.Sprint(code, err, "\n", string(body))
	})
	waitFor(t, 60*time.Second, "the liveness probe in /metrics/probes", func() (bool, string) {
		code, body, err := b.getAuth("/metrics/probes")
		return err == nil && code == 200 && bytes.Contains(body, []byte(b.livenessSeries())), fmt.Sprint(code, err, "\n", string(body))
	})
	return b
}

// livenessSeries is the start of the test container's successful-liveness
// line in /metrics/probes.
func (b *berth) livenessSeries() string {
	return fmt.Sprintf(`prober_probe_total{container="app",namespace="default",pod=%q,pod_uid=%q,probe_type="Liveness",result="successful"} `,
		b.Pod, b.PodUID)
}

// hasLine reports whether body has a line starting with prefix.
func hasLine(body []byte, prefix string) bool {
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
