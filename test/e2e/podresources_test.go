package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cgroupValue reads a cgroup file of the container whose init is pid: file
// v1 of the v1 controller's hierarchy, or file v2 of the unified one.
func cgroupValue(t *testing.T, pid int, controller, v1File, v2File string) string {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var path, unified string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == controller {
				path = filepath.Join("/sys/fs/cgroup", controller, parts[2], v1File)
			}
		}
	}
	if path == "" {
		path = filepath.Join("/sys/fs/cgroup", unified, v2File)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("container cgroup: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// TestPodLevelResources: a pod's spec.resources limits reach the kernel for
// a container without limits of its own (the kubelet's rule), and a
// container's own limit stays; the pod-level requests count at admission.
func TestPodLevelResources(t *testing.T) {
	b := startBerth(t, Options{})
	spec := "  resources:\n    requests: {cpu: 250m, memory: 48Mi}\n    limits: {cpu: 500m, memory: 64Mi}\n"
	writeFile(t, b.Pods, "capped.yaml", nodePod("capped", spec, "")+
		"    - name: own\n      image: \""+testImage+"\"\n      args: [\"sleep\"]\n      resources: {limits: {memory: 48Mi}}\n")
	ids := waitPodRunning(t, b.Node, "capped", "app", "own")

	app := inspect(t, ids["app"])
	if got := cgroupValue(t, app.State.Pid, "memory", "memory.limit_in_bytes", "memory.max"); got != fmt.Sprint(64<<20) {
		t.Errorf("app's memory limit in its cgroup: %s, want the pod's 64Mi (%d)", got, 64<<20)
	}
	quota := cgroupValue(t, app.State.Pid, "cpu", "cpu.cfs_quota_us", "cpu.max")
	if quota != "50000" && !strings.HasPrefix(quota, "50000 ") {
		t.Errorf("app's cpu quota in its cgroup: %s, want the pod's 500m (50000 per 100000)", quota)
	}
	own := inspect(t, ids["own"])
	if got := cgroupValue(t, own.State.Pid, "memory", "memory.limit_in_bytes", "memory.max"); got != fmt.Sprint(48<<20) {
		t.Errorf("own's memory limit in its cgroup: %s, want its own 48Mi", got)
	}
	p, err := b.Pod("capped")
	if err != nil || p == nil {
		t.Fatalf("/pods/default/capped: %v", err)
	}
	if p.Status.QOSClass != "Burstable" {
		t.Errorf("qosClass %q, want Burstable (pod-level requests below limits)", p.Status.QOSClass)
	}
}
