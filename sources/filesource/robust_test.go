package filesource

// Hostile files next to a good one: the file source keeps the good pod and
// is bounded (Decode itself is tested in package manifest).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/sources"
)

func robustPod(name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  containers:\n  - name: c\n    image: busybox\n", name)
}

// TestRobustFileSourceHostile puts hostile files next to a good one: a scan
// keeps the good pod, reports an error per hostile file, and is bounded.
func TestRobustFileSourceHostile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "good.yaml", robustPod("good"))
	files := map[string]string{
		"truncated.yaml": robustPod("truncated")[:40],
		"garbage.yaml":   string([]byte{0x00, 0xff, 0xfe, 0x01, '{', '[', 0xc3, 0x28, 0x00}),
		"nested.yaml":    strings.Repeat("[", 100000),
		"bomb.yaml":      testutil.BillionLaughs,
		"docs.yaml":      strings.Repeat("---\na: 1\n", 1<<20), // 9 MiB, under the size limit
		"big.yaml":       robustPod("big") + "# " + strings.Repeat("x", sources.MaxManifestBytes) + "\n",
	}
	for name, data := range files {
		write(t, dir, name, data)
	}
	// Exactly at the size limit is accepted.
	exact := robustPod("exact") + "#"
	exact += strings.Repeat("x", sources.MaxManifestBytes-len(exact)-1) + "\n"
	write(t, dir, "exact.yaml", exact)

	start := time.Now()
	u := <-runSource(t, New("file", dir, time.Hour, sources.Options{}))
	took := time.Since(start)
	if got := podNames(u); strings.Join(got, ",") != "exact,good" {
		t.Errorf("pods %v, want [exact good]", got)
	}
	byFile := map[string]int{}
	for _, e := range u.Errors {
		byFile[filepath.Base(e.Origin)]++
	}
	for name := range files {
		if byFile[name] == 0 {
			t.Errorf("no error for %s; errors %.500v", name, u.Errors)
		}
	}
	if byFile["docs.yaml"] > manifest.MaxManifestErrors {
		t.Errorf("docs.yaml: %d errors", byFile["docs.yaml"])
	}
	for _, e := range u.Errors {
		if filepath.Base(e.Origin) == "big.yaml" && e.Err != "file is larger than 10 MiB" {
			t.Errorf("big.yaml: %v", e)
		}
	}
	if took > 20*time.Second {
		t.Errorf("scan took %s", took)
	}
	t.Logf("scan of %d files took %s; %d errors", len(files)+2, took.Round(time.Millisecond), len(u.Errors))

	// A file growing past the limit after it was read.
	if err := os.WriteFile(filepath.Join(dir, "exact.yaml"), []byte(exact+"x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if dec, read := sources.DecodeFile("file", filepath.Join(dir, "exact.yaml"), manifest.Options{}); read != sources.ReadFailed || len(dec.Errors) != 1 || dec.Errors[0].Err != "file is larger than 10 MiB" {
		t.Errorf("exact.yaml + 1 byte: read %v, errors %v", read, dec.Errors)
	}
}
