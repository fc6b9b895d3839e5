// Package docs checks the reference in docs/ against the code: every
// config key Load reads, every route the agent's API mounts, every metric
// its registries describe and every label or annotation the code names has
// a row in its docs/ table, and no row names one that is gone.
package docs

import (
	"bufio"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/berth-dev/berth/agent"
	"github.com/berth-dev/berth/config"
	"github.com/berth-dev/berth/internal/layering"
	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/server"
)

func TestConfigKeysAreDocumented(t *testing.T) {
	compare(t, "docs/config.md", "", config.Keys())
}

// Labels and annotations are the string constants of the code (tests and
// tools aside) that name one: io.berth.* or berth.io/*.
func TestLabelsAreDocumented(t *testing.T) {
	compare(t, "docs/labels.md", "", labelNames(t))
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

var labelName = regexp.MustCompile(`^(io\.berth(\.[a-z0-9-]+)+|berth\.io/[a-z0-9.-]+)$`)

// labelNames returns the label and annotation names among the string
// literals of berth's non-test Go files, tests, tools and nested modules
// aside.
func labelNames(t *testing.T) []string {
	t.Helper()
	root := testutil.ModuleRoot(t)
	var names []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || layering.Tool(filepath.ToSlash(rel)) ||
				exists(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && labelName.MatchString(s) && !slices.Contains(names, s) {
					names = append(names, s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
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
