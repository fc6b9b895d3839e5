// Package layering states berth's import rule (see ARCHITECTURE.md) and
// checks it: each package has a layer, and may import only berth packages
// of lower layers, and those its layer orders beneath it (Beneath). Its test fails on any import that breaks the rule.
package layering

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Module is berth's module path.
const Module = "github.com/berth-dev/berth"

// Layers maps each production package (path inside the module, "" for the
// root) to its layer. A package may import berth packages of a lower layer
// only; a package missing here is an error, so a new package must be placed.
var Layers = map[string]int{
	// 0: foundations, importing nothing of berth.
	"model": 0, "internal/backoff": 0, "internal/editdist": 0, "internal/secretfile": 0, "etcdclient": 0, "events": 0, "pause": 0, "servingcert": 0,
	"resourcehelper": 0, "internal/jsonfield": 0, "internal/kubeversion": 0, "describe": 0,
	"kubeapi/apierr": 0, "kubeapi/nodelogs": 0, "kubeapi/openapi": 0, "kubeapi/printers": 0,
	// 1: one mechanism each, over the model.
	"manifest": 1, "validation": 1, "podfs": 1, "runtime": 1, "store": 1, "cluster": 1, "podview": 1, "podstatus": 1, "restarts": 1,
	// 2: translation, admission, transports, probes, pulls, configuration.
	"config": 2, "podconfig": 2, "images": 2, "admission": 2, "sources": 2, "sources/filesource": 2,
	"prober": 2, "stats": 2, "claims": 2, "imagegc": 2, "sweep": 2, "eviction": 2, "projected": 2, "pauseimage": 2, "termmsg": 2,
	"kubeapi": 2, "kubeapi/stream": 2, "kubeapi/registry": 2,
	// 3: the loops and the API: informers, the controller, metrics, server.
	"informer": 3, "controller": 3, "metrics": 3, "server": 3,
	// 4: the agent's wiring; 5: the client commands; 6: main.
	"agent": 4, "cli": 5, "": 6,
}

// Beneath orders packages inside one layer: a package may also import the
// packages of its own layer listed for it here. manifest decodes and
// defaults a pod, then hands it to validation. kubeapi mounts the handlers
// of its streams (kubeapi/stream), which read the store and run on the
// runtime as kubeapi does, serves the kinds of its registry
// (kubeapi/registry), and writes through the push source (sources), whose
// write options and results it takes. The file source sends the Updates of sources and
// reads files through its helpers. The order has no cycle (its test checks).
var Beneath = map[string][]string{"manifest": {"validation"}, "kubeapi": {"kubeapi/stream", "kubeapi/registry", "sources"}, "sources/filesource": {"sources"}}

// TestOnly are packages only tests, benchmarks and tools may import.
var TestOnly = map[string]bool{"runtime/fake": true, "internal/testutil": true, "internal/testutil/imagescope": true,
	"internal/testutil/kubestream": true}

// Tool reports whether pkg is a test suite, benchmark or build tool: it may
// import anything, and no production package may import it.
func Tool(pkg string) bool {
	for _, p := range []string{"test/", "bench/", "hack/", "internal/layering"} {
		if strings.HasPrefix(pkg+"/", p) || strings.HasPrefix(pkg, p) {
			return true
		}
	}
	return TestOnly[pkg]
}

// Check returns every import of graph (package → berth packages it
// imports, non-test files only) that breaks the rule.
func Check(graph map[string][]string) []string {
	var bad []string
	for pkg, imps := range graph {
		if Tool(pkg) {
			continue
		}
		l, ok := Layers[pkg]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: not placed in a layer (internal/layering.Layers)", name(pkg)))
			continue
		}
		for _, imp := range imps {
			switch il, ok := Layers[imp]; {
			case Tool(imp):
				bad = append(bad, fmt.Sprintf("%s imports %s: only tests and tools may", name(pkg), imp))
			case !ok:
				bad = append(bad, fmt.Sprintf("%s imports %s, which is not placed in a layer", name(pkg), imp))
			case il > l || il == l && !slices.Contains(Beneath[pkg], imp):
				bad = append(bad, fmt.Sprintf("%s (layer %d) imports %s (layer %d): only lower layers may be imported", name(pkg), l, imp, il))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

func name(pkg string) string {
	if pkg == "" {
		return "berth (main)"
	}
	return pkg
}

// Graph reads the berth imports of every package under root, the module's
// directory, from the non-test files; nested modules (a go.mod of their
// own) and testdata are skipped.
func Graph(root string) (map[string][]string, error) {
	graph := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			if rel != "." && (strings.HasPrefix(base, ".") || base == "testdata" || exists(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(rel))
		if pkg == "." {
			pkg = ""
		}
		seen := map[string]bool{}
		for _, s := range graph[pkg] {
			seen[s] = true
		}
		if _, ok := graph[pkg]; !ok {
			graph[pkg] = nil
		}
		for _, is := range f.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			if p != Module && !strings.HasPrefix(p, Module+"/") {
				continue
			}
			p = strings.TrimPrefix(strings.TrimPrefix(p, Module), "/")
			if !seen[p] {
				seen[p] = true
				graph[pkg] = append(graph[pkg], p)
			}
		}
		return nil
	})
	return graph, err
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
