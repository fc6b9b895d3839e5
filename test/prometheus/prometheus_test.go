// Package prometheus checks berth's metrics with the real tools: promtool
// lints /metrics and the shipped alert rules, and a real Prometheus server
// scrapes a running berth and loads the rules.
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
	"testing"
	"time"

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

func get(url string) (int, []byte, error) {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
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

// startBerth runs the real binary with an empty manifest directory.
func startBerth(t *testing.T) int {
	t.Helper()
	bin := testutil.Build(t, t.TempDir(), ".", "berth")
	port := testutil.FreePort(t)
	cmd := exec.Command(bin, "run")
	cmd.Env = append(os.Environ(), "BERTH_NODE_NAME=prom-"+fmt.Sprint(port), "BERTH_ROOT_DIR="+t.TempDir(),
		"BERTH_SOURCES_FILE_PATH="+t.TempDir(), fmt.Sprintf("BERTH_SERVER_PORT=%d", port), "BERTH_CADVISOR_ENABLED=false")
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("berth log:\n%s", logs.String())
		}
	})
	waitFor(t, 60*time.Second, "berth /readyz", func() (bool, string) {
		code, body, err := get(fmt.Sprintf("http://127.0.0.1:%d/readyz", port))
		return err == nil && code == 200, fmt.Sprint(code, string(body), err)
	})
	return port
}

func TestPromtoolChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs berth against the Docker engine")
	}
	promtool := need(t, "promtool")
	port := startBerth(t)
	_, body, err := get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"workqueue_depth", "berth_reconcile_total", "berth_pods", "berth_source_last_sync_timestamp_seconds", "go_goroutines", "process_resident_memory_bytes"} {
		if !bytes.Contains(body, []byte(name)) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = bytes.NewReader(body)
	if out, err := check.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	rules := filepath.Join(testutil.ModuleRoot(t), "deploy", "prometheus", "berth-alerts.yml")
	if out, err := exec.Command(promtool, "check", "rules", rules).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
}

func TestPrometheusScrapesBerth(t *testing.T) {
	if testing.Short() {
		t.Skip("runs berth against the Docker engine")
	}
	prom := need(t, "prometheus")
	port := startBerth(t)
	dir := t.TempDir()
	rules := filepath.Join(testutil.ModuleRoot(t), "deploy", "prometheus", "berth-alerts.yml")
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: berth
    static_configs:
      - targets: ["127.0.0.1:%d"]
`, rules, port)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
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
			t.Logf("prometheus log:\n%s", logs.String())
		}
	})
	api := fmt.Sprintf("http://127.0.0.1:%d/api/v1/", pport)
	query := func(q string) (bool, string) {
		code, body, err := get(api + "query?query=" + url.QueryEscape(q))
		if err != nil || code != 200 {
			return false, fmt.Sprint(code, err)
		}
		var r struct {
			Data struct {
				Result []struct {
					Value []interface{} `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return false, err.Error()
		}
		return len(r.Data.Result) > 0 && fmt.Sprint(r.Data.Result[0].Value[1]) == "1", string(body)
	}
	waitFor(t, 60*time.Second, "Prometheus to scrape berth (up == 1)", func() (bool, string) { return query(`up{job="berth"}`) })
	waitFor(t, 30*time.Second, "berth's series in Prometheus", func() (bool, string) {
		return query(`count(berth_pods) > bool 0`)
	})
	waitFor(t, 30*time.Second, "the alert rules to load healthy", func() (bool, string) {
		code, body, err := get(api + "rules")
		if err != nil || code != 200 {
			return false, fmt.Sprint(code, err)
		}
		return bytes.Count(body, []byte(`"health":"ok"`)) == 8, string(body)
	})
}
