// Package prometheus checks berth's metrics with the real tools: promtool
// lints /metrics, /metrics/resource, /metrics/probes and the shipped alert
// rules, and a real Prometheus server with the shipped scrape config
// scrapes a running berth (cAdvisor on, a pod with a liveness probe) and
// loads the rules.
package prometheus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/berth-dev/berth/internal/testutil"
)

func need(t *testing.T, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		t.Fatalf("%s not installed (Debian package prometheus; scripts/ensure-deps.sh installs it)", tool)
	}
	return p
}

func do(req *http.Request) (int, []byte, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func get(url string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	return do(req)
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last: %s", what, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// promtoolCheck lints an exposition with promtool check metrics; any
// finding fails the test.
func promtoolCheck(t *testing.T, promtool, what string, body []byte) {
	t.Helper()
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = bytes.NewReader(body)
	if out, err := check.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics %s: %v\n%s\n%s", what, err, out, body)
	}
}

func TestPromtoolChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs berth against the Docker engine")
	}
	promtool := need(t, "promtool")
	b := startBerth(t)
	_, body, err := get(fmt.Sprintf("http://127.0.0.1:%d/metrics", b.Port))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"workqueue_depth", "berth_reconcile_total", "berth_pods", "berth_source_last_sync_timestamp_seconds", "go_goroutines", "process_resident_memory_bytes"} {
		if !bytes.Contains(body, []byte(name)) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	promtoolCheck(t, promtool, "/metrics", body)

	// The kubelet's endpoints: authenticated, and lint-clean as served.
	for _, path := range []string{"/metrics/resource", "/metrics/probes", "/runningpods/"} {
		if code, _, err := get(fmt.Sprintf("http://127.0.0.1:%d%s", b.Port, path)); err != nil || code != http.StatusUnauthorized {
			t.Errorf("%s without token = %d %v, want 401", path, code, err)
		}
	}
	_, res, err := b.getAuth("/metrics/resource")
	if err != nil {
		t.Fatal(err)
	}
	prefix := func(name, labels string) string { return name + "{" + labels + "} " }
	ctr := fmt.Sprintf(`container="app",namespace="default",pod=%q`, b.Pod)
	pod := fmt.Sprintf(`namespace="default",pod=%q`, b.Pod)
	for _, want := range []string{"node_cpu_usage_seconds_total ", "node_memory_working_set_bytes ",
		prefix("container_cpu_usage_seconds_total", ctr), prefix("container_memory_working_set_bytes", ctr),
		prefix("container_start_time_seconds", ctr), prefix("pod_cpu_usage_seconds_total", pod),
		prefix("pod_memory_working_set_bytes", pod), "scrape_error 0", "resource_scrape_error 0"} {
		if !hasLine(res, want) {
			t.Errorf("/metrics/resource lacks %q", want)
		}
	}
	// Usage samples carry their stats' time (milliseconds, within a minute).
	for _, l := range strings.Split(string(res), "\n") {
		if !strings.HasPrefix(l, "container_memory_working_set_bytes{"+ctr+"}") {
			continue
		}
		f := strings.Fields(l)
		ms, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if len(f) != 3 || err != nil || time.Since(time.UnixMilli(ms)).Abs() > time.Minute {
			t.Errorf("container memory sample without a current timestamp: %q", l)
		}
	}
	promtoolCheck(t, promtool, "/metrics/resource", res)

	_, probes, err := b.getAuth("/metrics/probes")
	if err != nil {
		t.Fatal(err)
	}
	if !hasLine(probes, b.livenessSeries()) || !bytes.Contains(probes, []byte("prober_probe_duration_seconds_bucket{")) {
		t.Errorf("/metrics/probes lacks the liveness series:\n%s", probes)
	}
	promtoolCheck(t, promtool, "/metrics/probes", probes)

	// /runningpods/ lists what actually runs: the pod, its app container.
	code, running, err := b.getAuth("/runningpods/")
	var list v1.PodList
	if err != nil || code != 200 || json.Unmarshal(running, &list) != nil {
		t.Fatalf("/runningpods/ = %d %v %s", code, err, running)
	}
	if len(list.Items) != 1 || list.Items[0].Name != b.Pod || string(list.Items[0].UID) != b.PodUID ||
		len(list.Items[0].Spec.Containers) != 1 || list.Items[0].Spec.Containers[0].Name != "app" ||
		list.Items[0].Spec.Containers[0].Image != testImage {
		t.Errorf("/runningpods/ = %s", running)
	}

	rules := filepath.Join(testutil.ModuleRoot(t), "deploy", "prometheus", "berth-alerts.yml")
	if out, err := exec.Command(promtool, "check", "rules", rules).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
}

// shippedConfig is deploy/prometheus/prometheus.yml pointed at this test's
// berth: its port, its token file, the rules by absolute path, and 1s
// intervals. It returns the config and its job names.
func shippedConfig(t *testing.T, b *berth) ([]byte, []string) {
	t.Helper()
	dir := filepath.Join(testutil.ModuleRoot(t), "deploy", "prometheus")
	raw, err := os.ReadFile(filepath.Join(dir, "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("deploy/prometheus/prometheus.yml: %v", err)
	}
	cfg["global"] = map[string]any{"scrape_interval": "1s", "evaluation_interval": "1s"}
	var rules []any
	for _, r := range cfg["rule_files"].([]any) {
		rules = append(rules, filepath.Join(dir, r.(string)))
	}
	cfg["rule_files"] = rules
	var jobs []string
	target := fmt.Sprintf("127.0.0.1:%d", b.Port)
	for _, sc := range cfg["scrape_configs"].([]any) {
		job := sc.(map[string]any)
		jobs = append(jobs, job["job_name"].(string))
		for _, st := range job["static_configs"].([]any) {
			targets := st.(map[string]any)["targets"].([]any)
			if len(targets) != 1 || targets[0] != "127.0.0.1:10350" {
				t.Fatalf("job %s: targets %v, want berth's default address", job["job_name"], targets)
			}
			st.(map[string]any)["targets"] = []any{target}
		}
		if auth, ok := job["authorization"].(map[string]any); ok {
			auth["credentials_file"] = b.TokenFile
		}
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(jobs)
	return out, jobs
}

func TestPrometheusScrapesBerth(t *testing.T) {
	if testing.Short() {
		t.Skip("runs berth against the Docker engine")
	}
	prom := need(t, "prometheus")
	b := startBerth(t)
	cfg, jobs := shippedConfig(t, b)
	for _, j := range []string{"berth", "berth-cadvisor", "berth-resource", "berth-probes"} {
		if sort.SearchStrings(jobs, j) == len(jobs) || jobs[sort.SearchStrings(jobs, j)] != j {
			t.Fatalf("shipped config lacks job %s (jobs %v)", j, jobs)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	pport := testutil.FreePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, prom, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), fmt.Sprintf("--web.listen-address=127.0.0.1:%d", pport))
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus config:\n%s\nprometheus log:\n%s", cfg, logs.String())
		}
	})
	api := fmt.Sprintf("http://127.0.0.1:%d/api/v1/", pport)

	waitFor(t, 60*time.Second, "every shipped job's target up", func() (bool, string) {
		code, body, err := get(api + "targets?state=active")
		if err != nil || code != 200 {
			return false, fmt.Sprint(code, err)
		}
		var r struct {
			Data struct {
				ActiveTargets []struct {
					ScrapePool string `json:"scrapePool"`
					Health     string `json:"health"`
				} `json:"activeTargets"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return false, err.Error()
		}
		var up []string
		for _, tg := range r.Data.ActiveTargets {
			if tg.Health == "up" {
				up = append(up, tg.ScrapePool)
			}
		}
		sort.Strings(up)
		return fmt.Sprint(up) == fmt.Sprint(jobs) && len(r.Data.ActiveTargets) == len(jobs), string(body)
	})
	query := func(q string) (float64, string) {
		code, body, err := get(api + "query?query=" + url.QueryEscape(q))
		if err != nil || code != 200 {
			return 0, fmt.Sprint(code, err)
		}
		var r struct {
			Data struct {
				Result []struct {
					Value []any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &r); err != nil || len(r.Data.Result) != 1 {
			return 0, string(body)
		}
		v, _ := strconv.ParseFloat(fmt.Sprint(r.Data.Result[0].Value[1]), 64)
		return v, string(body)
	}
	waitFor(t, 30*time.Second, "berth's series in Prometheus", func() (bool, string) {
		v, s := query(`count(berth_pods)`)
		return v > 0, s
	})
	waitFor(t, 30*time.Second, "the test container's working set in Prometheus", func() (bool, string) {
		v, s := query(fmt.Sprintf(`container_memory_working_set_bytes{job="berth-resource",namespace="default",pod=%q,container="app"}`, b.Pod))
		return v > 0, s
	})
	waitFor(t, 30*time.Second, "the test container's liveness probes in Prometheus", func() (bool, string) {
		v, s := query(fmt.Sprintf(`prober_probe_total{job="berth-probes",namespace="default",pod=%q,pod_uid=%q,container="app",probe_type="Liveness",result="successful"}`,
			b.Pod, b.PodUID))
		return v > 0, s
	})
	waitFor(t, 30*time.Second, "the alert rules to load healthy", func() (bool, string) {
		code, body, err := get(api + "rules")
		if err != nil || code != 200 {
			return false, fmt.Sprint(code, err)
		}
		return bytes.Count(body, []byte(`"health":"ok"`)) == 8, string(body)
	})
}
