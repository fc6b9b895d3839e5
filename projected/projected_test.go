package projected

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/podfs"
)

// A payload is written once: an unchanged one costs no write, a changed
// one is written again; a build's failure and a payload past the pod's
// bound are the volume's error; RemoveStale removes the directories of
// other UIDs no one uses.
func TestSync(t *testing.T) {
	paths := podfs.New(t.TempDir())
	w := New(paths, 1<<20, slog.New(slog.DiscardHandler))
	data := "one"
	builds := 0
	build := func(v *v1.Volume) (podfs.Projection, error) {
		builds++
		switch v.Name {
		case "missing":
			return podfs.Projection{}, errors.New("configmap missing")
		case "huge":
			return podfs.Projection{UID: "u1", Volume: v.Name, Files: map[string]podfs.File{"f": {Data: make([]byte, 2<<20), Mode: 0o644}}}, nil
		}
		return podfs.Projection{UID: "u1", Volume: v.Name, Now: time.Now(),
			Files: map[string]podfs.File{"key": {Data: []byte(data), Mode: 0o644}}}, nil
	}
	vols := []*v1.Volume{{Name: "cm"}, {Name: "missing"}, {Name: "huge"}}
	failed := w.Sync("default/web", "u1", vols, build)
	if len(failed) != 2 || failed["missing"] == nil || failed["huge"] == nil {
		t.Fatalf("failed %v, want missing and huge", failed)
	}
	got, err := read(paths, "u1", "cm", "key")
	if err != nil || string(got) != "one" {
		t.Fatalf("written %q %v", got, err)
	}
	if !w.current("u1", "cm", digestOf(t, build)) {
		t.Fatal("the written payload is not remembered")
	}
	data = "two"
	if failed := w.Sync("default/web", "u1", vols[:1], build); failed != nil {
		t.Fatalf("failed %v", failed)
	}
	if got, _ := read(paths, "u1", "cm", "key"); string(got) != "two" {
		t.Fatalf("changed payload not written: %q", got)
	}

	w.RemoveStale("default/web", "u1", func(string) bool { return false })
	if _, err := read(paths, "u1", "cm", "key"); err != nil {
		t.Fatalf("the kept UID lost its files: %v", err)
	}
	w.RemoveStale("default/web", "u2", func(string) bool { return true })
	if _, err := read(paths, "u1", "cm", "key"); err != nil {
		t.Fatalf("a UID in use lost its files: %v", err)
	}
	w.RemoveStale("default/web", "u2", func(string) bool { return false })
	dir, _ := paths.PodDir("u1")
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("stale pod directory kept: %v", err)
	}
	if w.current("u1", "cm", digestOf(t, build)) {
		t.Fatal("a removed UID's payload is still remembered")
	}
}

func read(paths podfs.Root, uid, volume, name string) ([]byte, error) {
	dir, err := paths.ProjectedDir(uid, volume)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, name))
}

func digestOf(t *testing.T, build func(*v1.Volume) (podfs.Projection, error)) string {
	t.Helper()
	pr, err := build(&v1.Volume{Name: "cm"})
	if err != nil {
		t.Fatal(err)
	}
	return digest(pr)
}
