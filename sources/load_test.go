package sources

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/manifest"
)

func TestValidateFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", podYAML)
	write(t, dir, "b.json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
	write(t, dir, "c.yml", strings.Replace(podYAML, "name: web\nspec", "name: bad\nspec", 1)+"    imagee: x\n")
	write(t, dir, "notes.txt", "not a manifest")
	write(t, dir, "c.yml~", "an editor's backup")
	single := write(t, t.TempDir(), "pod.txt", strings.ReplaceAll(podYAML, "name: web", "name: other"))

	n, warns, errs, err := ValidateFiles([]string{dir, single}, manifest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("npods %d, want 2", n)
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		filepath.Join(dir, "c.yml") + `: default/bad: spec.containers[0].imagee: unknown field; did you mean "image"?`,
		filepath.Join(dir, "notes.txt") + ": manifest must be an object or a list of ContainerManifests",
		filepath.Join(dir, "b.json") + `: default/web: metadata.name: Duplicate value: "web": pod default/web is already declared in ` + filepath.Join(dir, "a.yaml"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors\n%q\nwant\n%q", got, want)
	}

	if want := []string{filepath.Join(dir, "c.yml~") + ": skipped: an editor swap or backup file"}; !reflect.DeepEqual(warns, want) {
		t.Errorf("warnings %q, want %q", warns, want)
	}

	_, _, _, err = ValidateFiles([]string{filepath.Join(dir, "missing")}, manifest.Options{})
	if err == nil || !strings.Contains(err.Error(), "path does not exist") {
		t.Errorf("missing path: %v", err)
	}
}

func write(t *testing.T, dir, name, data string) string {
	t.Helper()
	return testutil.WriteFile(t, dir, name, data)
}
