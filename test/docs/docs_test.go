// Package docs checks the reference in docs/ against the code: every
// config key Load reads, every route the agent's API mounts and every metric
// its registries describe has a row in its docs/ table, and no row names
// one that is gone.
package docs

import (
	"bufio"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/berth-dev/berth/agent"
	"github.com/berth-dev/berth/config"
	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/server"
)

func TestConfigKeysAreDocumented(t *testing.T) {
	compare(t, "docs/config.md", "", config.Keys())
}

// Routes and metrics come from one agent built with every optional part;
// docs/metrics.md has one section per endpoint.
func TestRoutesAndMetricsAreDocumented(t *testing.T) {
	a := fullAgent(t)
	t.Run("routes", func(t *testing.T) { compare(t, "docs/api.md", "", a.API().Patterns()) })
	m := a.Metrics()
	for endpoint, c := range map[string]prometheus.Collector{
		"/metrics":          m.Registry,
		"/metrics/probes":   m.ProbeRegistry,
		"/metrics/resource": server.NewResourceCollector(context.Background(), a.Stats()),
		"/metrics/cadvisor": a.Stats().Collector(),
	} {
		t.Run(endpoint, func(t *testing.T) {
			if c == nil {
				t.Fatalf("cAdvisor is unavailable on this host (%v): %s cannot be checked", a.Stats(), endpoint)
			}
			compare(t, "docs/metrics.md", endpoint, metricNames(c))
		})
	}
}

// fullAgent builds (without running) an agent with every optional part on:
// etcd (a real one), the push source, the HTTP source, tokens, cAdvisor.
func fullAgent(t *testing.T) *agent.Agent {
	t.Helper()
	etcd := testutil.StartEtcd(t)
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("docs-check-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"BERTH_NODE_NAME":               "docs-check",
		"BERTH_ROOT_DIR":                filepath.Join(dir, "root"),
		"BERTH_SOURCES_FILE_PATH":       filepath.Join(dir, "pods"),
		"BERTH_SOURCES_HTTP_URL":        "http://127.0.0.1:1/pods",
		"BERTH_SOURCES_ETCD_ENDPOINTS":  etcd.ClientURL,
		"BERTH_SOURCES_PUSH_ENABLED":    "true",
		"BERTH_SOURCES_PUSH_TOKEN_FILE": tokens,
		"BERTH_SERVER_TOKEN_FILE":       tokens,
		"BERTH_CADVISOR_ENABLED":        "true",
	} {
		t.Setenv(k, v)
	}
	cfg, err := config.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// metricNames are the names of every metric the collectors describe.
func metricNames(cs ...prometheus.Collector) []string {
	ch := make(chan *prometheus.Desc)
	go func() {
		for _, c := range cs {
			c.Describe(ch)
		}
		close(ch)
	}()
	var names []string
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil && !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	return names
}

// rowName is the first cell of a table row when it is one code span;
// heading a title that is one code span (a section of docs/metrics.md).
var (
	rowName = regexp.MustCompile("^\\|\\s*`([^`]+)`\\s*\\|")
	heading = regexp.MustCompile("^#+\\s*`([^`]+)`\\s*$")
)

// documented returns the names of the table rows in file (relative to the
// module root), all of them (section "") or those under the heading
// naming section.
func documented(t *testing.T, file, section string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(testutil.ModuleRoot(t), file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	in := section == ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") && section != "" {
			m := heading.FindStringSubmatch(sc.Text())
			in = m != nil && m[1] == section
		}
		if m := rowName.FindStringSubmatch(sc.Text()); m != nil && in {
			names = append(names, m[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// compare fails for each name of the code without a row in file's section,
// and each row naming nothing of the code. A row ending in "*" (go_*)
// stands for every name with that prefix and must match one.
func compare(t *testing.T, file, section string, code []string) {
	t.Helper()
	if len(code) == 0 {
		t.Fatalf("the code lists nothing to document in %s", file)
	}
	where := file
	if section != "" {
		where += " section `" + section + "`"
	}
	docs := documented(t, file, section)
	covers := func(doc, name string) bool {
		if prefix, ok := strings.CutSuffix(doc, "*"); ok {
			return strings.HasPrefix(name, prefix)
		}
		return doc == name
	}
	slices.Sort(code)
	for _, name := range code {
		if !slices.ContainsFunc(docs, func(d string) bool { return covers(d, name) }) {
			t.Errorf("%s has no row for `%s`", where, name)
		}
	}
	for _, d := range docs {
		if !slices.ContainsFunc(code, func(name string) bool { return covers(d, name) }) {
			t.Errorf("%s documents `%s`, which the code does not have", where, d)
		}
	}
}
