package sources

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/berth-dev/berth/manifest"
)

func TestListDir(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.manifest", "b", "c.yaml", ".d.yaml", "e.yaml.swp"} {
		write(t, dir, name, "x")
	}
	files, skipped, err := ListDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "a.manifest"), filepath.Join(dir, "b"), filepath.Join(dir, "c.yaml")}; !reflect.DeepEqual(files, want) {
		t.Errorf("files %q", files)
	}
	want := []SkippedEntry{{filepath.Join(dir, ".d.yaml"), "hidden"}, {filepath.Join(dir, "e.yaml.swp"), "an editor swap or backup file"}}
	if !reflect.DeepEqual(skipped, want) {
		t.Errorf("skipped %v", skipped)
	}
}

// berth validate DIR names what it skipped, and says when a directory has
// nothing to read.
func TestValidateFilesReportsSkipped(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".hidden.yaml", podYAML)
	write(t, dir, "web.yaml.bak", podYAML)
	n, warns, errs, err := ValidateFiles([]string{dir}, manifest.Options{})
	if err != nil || n != 0 || len(errs) != 0 {
		t.Fatalf("n %d errs %v err %v", n, errs, err)
	}
	want := []string{
		filepath.Join(dir, ".hidden.yaml") + ": skipped: hidden",
		filepath.Join(dir, "web.yaml.bak") + ": skipped: an editor swap or backup file",
		dir + ": no file to read (2 entries skipped)",
	}
	if !reflect.DeepEqual(warns, want) {
		t.Errorf("warnings\n%q\nwant\n%q", warns, want)
	}
}

func TestIgnoredName(t *testing.T) {
	for name, want := range map[string]bool{
		"pod.yaml": false, "pod.yml": false, "pod.json": false, "POD.YAML": false,
		".pod.yaml": true, "pod.yaml~": true, "pod.swp": true, ".pod.yaml.swp": true, "pod.yaml.bak": true,
		"pod.tmp": true, "pod.txt": false, "pod": false, "..data": true, "etcd.manifest": false, "#pod.yaml#": true,
		"pod.yaml.swo": true,
	} {
		if got := IgnoredName(name); got != want {
			t.Errorf("IgnoredName(%q) = %v, want %v", name, got, want)
		}
	}
}
