// Package deploy tests berth deployed as the design says: a container image
// run --privileged --net=host --pid=host with the Docker socket, the
// manifest directory and root_dir mounted. The image is built from the
// repository's Dockerfile the way its header says, with no registry.
package deploy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/berth-dev/berth/internal/testutil"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"

	"github.com/berth-dev/berth/runtime"
)

func httpGet(url string) (int, string, error) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func TestBerthRunsAsPrivilegedHostNetworkContainer(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Docker engine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rt, err := runtime.NewDocker("")
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Ping(ctx); err != nil {
		t.Fatalf("Docker engine unreachable (run scripts/ensure-deps.sh): %v", err)
	}
	cli := rt.Client()
	testapp := testutil.Build(t, t.TempDir(), "./test/testapp", "testapp")
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	id := hex.EncodeToString(suffix)
	image := "berth-deploy-test:" + id
	node := "deploy-" + id
	if err := rt.BuildImage(ctx, "berth/testapp:1", testapp, "/testapp", []string{"/testapp"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		list, _ := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", runtime.LabelNode+"="+node))})
		for _, c := range list {
			_ = rt.RemoveContainer(ctx, c.ID)
		}
		_, _ = cli.ImageRemove(ctx, image, imageRemoveOptions())
	})
	buildFromDockerfile(t, ctx, image)

	pods := t.TempDir()
	// root_dir holds emptyDir volumes that the engine bind-mounts, so it is
	// mounted at the same path inside and outside; rshared, so the subPath
	// binds berth makes in its container reach the engine on the host.
	root, err := os.MkdirTemp("", "berth-deploy-root-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	sharedMount(t, root)
	port := testutil.FreePort(t)
	cfg := &container.Config{
		Image: image,
		Cmd:   []string{"run"},
		Env: []string{"BERTH_NODE_NAME=" + node, "BERTH_ROOT_DIR=" + root, "BERTH_SOURCES_FILE_PATH=/etc/berth/pods",
			fmt.Sprintf("BERTH_SERVER_PORT=%d", port), "BERTH_SOURCES_FILE_RESCAN=1s", "BERTH_CADVISOR_ENABLED=false"},
		Labels: map[string]string{"io.berth.test": "deploy"},
	}
	hc := &container.HostConfig{
		Privileged:  true,
		NetworkMode: "host",
		PidMode:     "host",
		Mounts: []mount.Mount{
			{Type: mount.TypeBind, Source: "/var/run/docker.sock", Target: "/var/run/docker.sock"},
			{Type: mount.TypeBind, Source: pods, Target: "/etc/berth/pods"},
			{Type: mount.TypeBind, Source: root, Target: root, BindOptions: &mount.BindOptions{Propagation: mount.PropagationRShared}},
		},
	}
	created, err := cli.ContainerCreate(ctx, cfg, hc, nil, nil, "berth-deploy-"+id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if t.Failed() {
			if rc, err := rt.Logs(ctx, created.ID, runtime.LogOptions{TailLines: 100}); err == nil {
				b, _ := io.ReadAll(rc)
				rc.Close()
				t.Logf("berth container log:\n%s", b)
			}
		}
		_ = rt.RemoveContainer(ctx, created.ID)
	})
	if err := cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		// Some sandboxes (this CI's among them) run dockerd with a reduced
		// capability bounding set, so runc cannot grant --privileged's full
		// set. Then run with every capability the host does have; all else
		// (host network and PID namespace, socket and mounts) stays.
		if !strings.Contains(err.Error(), "unable to apply caps") {
			t.Fatal(err)
		}
		caps := boundingCaps(t)
		t.Logf("engine cannot grant --privileged here (%v); retrying with --cap-add %s", err, strings.Join(caps, ","))
		_ = rt.RemoveContainer(ctx, created.ID)
		hc.Privileged = false
		hc.CapAdd = caps
		created, err = cli.ContainerCreate(ctx, cfg, hc, nil, nil, "berth-deploy-"+id)
		if err != nil {
			t.Fatal(err)
		}
		if err := cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// https:// sources verify against the CA bundle the image carries.
	ca, err := cli.ContainerStatPath(ctx, created.ID, "/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		t.Fatalf("CA bundle in the image: %v", err)
	}
	if host, err := os.Stat(hostCABundle); err != nil || host.Size() != ca.Size {
		t.Fatalf("CA bundle in the image has %d bytes, the host's %s %v", ca.Size, hostCABundle, err)
	}

	appPort := testutil.FreePort(t)
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: deployed
spec:
  containers:
  - name: web
    image: berth/testapp:1
    args: ["serve"]
    env: [{name: MESSAGE, value: from-containerised-berth}]
    ports: [{containerPort: 8080, hostPort: %d}]
  - name: writer
    image: berth/testapp:1
    args: [report, --write, /sub/hello=via-subpath, --sleep]
    volumeMounts: [{name: data, mountPath: /sub, subPath: sub}]
  - name: reader
    image: berth/testapp:1
    args: [report, --wait, /data/sub/hello, --cat, /data/sub/hello, --sleep]
    volumeMounts: [{name: data, mountPath: /data}]
  volumes: [{name: data, emptyDir: {}}]
`, appPort)
	if err := os.WriteFile(filepath.Join(pods, "deployed.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the pod to answer on its hostPort", func() bool {
		code, body, err := httpGet(fmt.Sprintf("http://127.0.0.1:%d/", appPort))
		return err == nil && code == 200 && body == "from-containerised-berth"
	})
	// The writer's subPath is a bind berth made in its own container.
	waitFor(t, ctx, "the reader to see what the writer wrote through its subPath", func() bool {
		list, err := cli.ContainerList(ctx, container.ListOptions{Filters: filters.NewArgs(
			filters.Arg("label", runtime.LabelNode+"="+node), filters.Arg("label", runtime.LabelContainerName+"=reader"))})
		if err != nil || len(list) != 1 {
			return false
		}
		rc, err := rt.Logs(ctx, list[0].ID, runtime.LogOptions{TailLines: 10})
		if err != nil {
			return false
		}
		defer rc.Close()
		b, _ := io.ReadAll(rc)
		return strings.Contains(string(b), `"/data/sub/hello":"via-subpath"`)
	})
	waitFor(t, ctx, "/metrics to report the running pod", func() bool {
		code, body, err := httpGet(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
		return err == nil && code == 200 && strings.Contains(body, `berth_pods{phase="Running"} 1`)
	})
}

// sharedMount makes dir a shared mount of its own (a bind onto itself),
// as a host whose / is a private mount needs for root_dir; undone at
// cleanup, the binds propagated into it with it.
func sharedMount(t *testing.T, dir string) {
	t.Helper()
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind %s onto itself: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	if err := unix.Mount("", dir, "", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		t.Fatalf("make %s shared: %v", dir, err)
	}
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// capNames are the Linux capabilities by bit number.
var capNames = []string{"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID",
	"SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER",
	"SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE",
	"SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP",
	"MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ"} // the ones Docker 20.10 knows

// boundingCaps lists the capabilities in this process's bounding set.
func boundingCaps(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if hexmask, ok := strings.CutPrefix(line, "CapBnd:"); ok {
			var mask uint64
			if _, err := fmt.Sscanf(strings.TrimSpace(hexmask), "%x", &mask); err != nil {
				t.Fatal(err)
			}
			var caps []string
			for i, name := range capNames {
				if mask&(1<<i) != 0 {
					caps = append(caps, name)
				}
			}
			return caps
		}
	}
	t.Fatal("no CapBnd in /proc/self/status")
	return nil
}
