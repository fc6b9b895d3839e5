package stats_test

// TestCadvisorDocker runs the real cAdvisor against the real Docker engine
// (DOCKER_HOST or the default socket) and the machine's cgroups; `go test
// -short` skips it. cAdvisor keeps process-global state, so this is the only
// test of the package that starts it.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/model"

	"github.com/docker/docker/api/types/container"

	berthrt "github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/server"
	"github.com/berth-dev/berth/stats"
	"github.com/berth-dev/berth/store"
)

const testImage = "berth/testapp:1"

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ensureImage builds the testapp image when the engine lacks it.
func ensureImage(t *testing.T, d *berthrt.Docker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if ok, err := d.ImagePresent(ctx, testImage); err != nil {
		t.Fatal(err)
	} else if ok {
		return
	}
	bin := testutil.Build(t, t.TempDir(), "./test/testapp", "testapp")
	if err := d.BuildImage(ctx, testImage, bin, "/testapp", []string{"/testapp"}); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, d *berthrt.Docker, cfg *berthrt.ContainerConfig) string {
	t.Helper()
	id, err := d.CreateContainer(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := d.RemoveContainer(ctx, id); err != nil {
			t.Errorf("cleanup %s: %v", cfg.Name, err)
		}
	})
	if err := d.StartContainer(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	return id
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// cpuAndRSS returns this process's CPU time and resident set size.
func cpuAndRSS() (time.Duration, int64) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	var rss int64
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				fmt.Sscanf(strings.TrimSpace(v), "%d", &rss)
				rss *= 1024
			}
		}
	}
	return cpu, rss
}

func TestCadvisorDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Docker engine and cgroups; skipped in -short mode")
	}
	d, err := berthrt.NewDocker("")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	pctx, pcancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer pcancel()
	if err := d.Ping(pctx); err != nil {
		t.Fatalf("Docker engine unreachable (is dockerd running?): %v", err)
	}
	ensureImage(t, d)

	node := "stats-test-" + randHex(4)
	st, err := store.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	cpu0, rss0 := cpuAndRSS()
	t0 := time.Now()
	p, err := stats.Open(ctx, stats.Options{
		NodeName: node, Housekeeping: time.Second, RootDir: t.TempDir(), Store: st,
		DockerHost: os.Getenv("DOCKER_HOST"),
	})
	srv := server.New(server.Options{Store: st, Tokens: []string{"secret"}})
	server.RegisterStats(srv, p)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	if err != nil {
		// cAdvisor cannot run here: berth must still serve, with 503s that
		// say why. Fail loudly in CI setups that require real stats.
		t.Logf("cAdvisor unavailable on this machine: %v", err)
		if os.Getenv("BERTH_REQUIRE_CADVISOR") != "" {
			t.Fatal("BERTH_REQUIRE_CADVISOR is set")
		}
		if err := p.Start(ctx); err != nil {
			t.Fatalf("Unavailable.Start: %v", err)
		}
		req, _ := http.NewRequest("GET", hs.URL+"/stats/summary", nil)
		req.Header.Set("Authorization", "Bearer secret")
		resp, err2 := http.DefaultClient.Do(req)
		if err2 != nil {
			t.Fatal(err2)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), err.Error()) {
			t.Fatalf("summary without cAdvisor = %d %s, want 503 with %q", resp.StatusCode, b, err)
		}
		return
	}
	cpu1, rss1 := cpuAndRSS()
	t.Logf("cAdvisor start: %v wall, %v CPU, RSS %+.1f MiB", time.Since(t0).Round(time.Millisecond),
		(cpu1 - cpu0).Round(time.Millisecond), float64(rss1-rss0)/(1<<20))

	// A pod as berth runs it: a sandbox holding the network namespace and an
	// app container joining it.
	pod := "stats-" + randHex(3)
	lbl := func(ctr string) map[string]string {
		return map[string]string{
			berthrt.LabelManaged: "true", berthrt.LabelNode: node,
			berthrt.LabelPodNamespace: "default", berthrt.LabelPodName: pod,
			berthrt.LabelPodUID: "uid-" + pod, berthrt.LabelContainerName: ctr,
		}
	}
	sandbox := run(t, d, &berthrt.ContainerConfig{
		Name: "berth-stats-test_POD_" + pod, Image: testImage, Cmd: []string{"sleep"}, Labels: lbl(model.SandboxName),
	})
	run(t, d, &berthrt.ContainerConfig{
		Name: "berth-stats-test_app_" + pod, Image: testImage, Cmd: []string{"serve"}, Labels: lbl("app"),
		NetworkMode: "container:" + sandbox,
	})

	authGet := func(path string) (int, []byte) {
		req, _ := http.NewRequest("GET", hs.URL+path, nil)
		req.Header.Set("Authorization", "Bearer secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}

	// The endpoints are authenticated.
	if code, _ := get(t, hs.URL+"/stats/summary"); code != http.StatusUnauthorized {
		t.Errorf("summary without token = %d, want 401", code)
	}

	var (
		sum     stats.Summary
		found   *stats.PodStats
		waited  time.Duration
		started = time.Now()
	)
	for deadline := time.Now().Add(30 * time.Second); ; {
		code, b := authGet("/stats/summary")
		if code != http.StatusOK {
			t.Fatalf("summary = %d %s", code, b)
		}
		sum = stats.Summary{}
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatalf("summary JSON: %v\n%s", err, b)
		}
		found = nil
		for i := range sum.Pods {
			if sum.Pods[i].PodRef.Name == pod {
				found = &sum.Pods[i]
			}
		}
		if found != nil && len(found.Containers) == 1 && found.Containers[0].Memory != nil &&
			found.Containers[0].Memory.WorkingSetBytes != nil && *found.Containers[0].Memory.WorkingSetBytes > 0 &&
			found.Containers[0].CPU != nil && found.Containers[0].CPU.UsageNanoCores != nil && found.Network != nil &&
			sum.Node.CPU != nil && sum.Node.CPU.UsageNanoCores != nil { // rates need two samples
			waited = time.Since(started)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s with container memory not in summary after 30s:\n%s", pod, b)
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("pod stats after %v", waited.Round(time.Millisecond))
	if b, err := json.MarshalIndent(map[string]any{"node": sum.Node, "pod": found}, "", "  "); err == nil {
		t.Logf("summary excerpt:\n%s", b)
	}

	n := sum.Node
	if n.NodeName != node || n.CPU == nil || n.CPU.UsageCoreNanoSeconds == nil || *n.CPU.UsageCoreNanoSeconds == 0 {
		t.Errorf("node cpu = %+v", n.CPU)
	}
	if n.Memory == nil || n.Memory.WorkingSetBytes == nil || *n.Memory.WorkingSetBytes == 0 || n.Memory.AvailableBytes == nil {
		t.Errorf("node memory = %+v", n.Memory)
	}
	if n.Fs == nil || n.Fs.CapacityBytes == nil || *n.Fs.CapacityBytes == 0 {
		t.Errorf("node fs = %+v", n.Fs)
	}
	if found.PodRef.UID != "uid-"+pod || found.PodRef.Namespace != "default" {
		t.Errorf("podRef = %+v", found.PodRef)
	}
	if found.Memory == nil || *found.Memory.WorkingSetBytes < *found.Containers[0].Memory.WorkingSetBytes {
		t.Errorf("pod memory total %+v below its container's", found.Memory)
	}
	if found.Network.Name != "eth0" || found.Network.RxBytes == nil {
		t.Errorf("pod network = %+v, want the sandbox's eth0", found.Network)
	}
	for _, p := range sum.Pods {
		if p.PodRef.Name != pod && strings.HasPrefix(p.PodRef.Name, "stats-") {
			t.Errorf("pod %+v of another node in the summary", p.PodRef)
		}
	}
	c := found.Containers[0]
	t.Logf("node: cpu %d nanocores, working set %d MiB; pod %s: app working set %d KiB, rss %d KiB, cpu %d nanocores; sandbox eth0 rx %d tx %d",
		*n.CPU.UsageNanoCores, *n.Memory.WorkingSetBytes>>20, pod, *c.Memory.WorkingSetBytes>>10, *c.Memory.RSSBytes>>10,
		*c.CPU.UsageNanoCores, *found.Network.RxBytes, *found.Network.TxBytes)

	code, b := authGet("/spec")
	var spec struct {
		NumCores       int    `json:"num_cores"`
		MemoryCapacity uint64 `json:"memory_capacity"`
	}
	if code != http.StatusOK || json.Unmarshal(b, &spec) != nil || spec.NumCores == 0 || spec.MemoryCapacity == 0 {
		t.Errorf("/spec = %d %.300s", code, b)
	}

	code, b = authGet("/metrics/cadvisor")
	want := `container="app",id="/docker/`
	if code != http.StatusOK || !strings.Contains(string(b), "container_memory_working_set_bytes{") ||
		!strings.Contains(string(b), want) || !strings.Contains(string(b), `pod="`+pod+`"`) ||
		!strings.Contains(string(b), "machine_cpu_cores") {
		t.Errorf("/metrics/cadvisor = %d, lacks series of pod %s:\n%.2000s", code, pod, b)
	}

	// Cost of housekeeping at 1 s over a few seconds of steady state.
	cpuA, _ := cpuAndRSS()
	time.Sleep(5 * time.Second)
	cpuB, rssB := cpuAndRSS()
	t.Logf("steady state (1s housekeeping, %d containers on the engine): %.1f%% of a CPU, RSS %.1f MiB (%.1f MiB over start)",
		countContainers(t, d), 100*float64(cpuB-cpuA)/float64(5*time.Second), float64(rssB)/(1<<20), float64(rssB-rss0)/(1<<20))
}

func countContainers(t *testing.T, d *berthrt.Docker) int {
	cs, err := d.Client().ContainerList(t.Context(), container.ListOptions{})
	if err != nil {
		return -1
	}
	return len(cs)
}
