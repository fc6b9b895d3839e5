package sources

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func pushCode(err error) int {
	var pe *PushError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return 0
}

// TestPushPutDeleteProgrammatic: the methods behind the routes: create,
// dry run (nothing persisted), base precondition, delete, refusals.
func TestPushPutDeleteProgrammatic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "push")
	s := NewPushSource("push", dir, Options{})
	web := []byte(nsPod("default", "web", "img:1"))

	put, err := s.Put("Pod", "default", "web", web, PutOptions{DryRun: true})
	if err != nil || !put.Created || put.Object.(*v1.Pod).Spec.Containers[0].Image != "img:1" {
		t.Fatalf("dry-run create: %v %v %v", put.Object, put.Created, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "default_web.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dry run persisted: %v", err)
	}
	if put, err := s.Put("Pod", "default", "web", web, PutOptions{}); err != nil || !put.Created {
		t.Fatalf("create: %v %v", put.Created, err)
	}
	if _, err := s.Put("Pod", "default", "web", web, PutOptions{}); pushCode(err) != http.StatusConflict {
		t.Fatalf("second create: %v", err)
	}
	cur, err := s.Manifest("Pod", "default", "web")
	if err != nil || !strings.Contains(string(cur), "image: img:1") || !strings.HasPrefix(string(cur), "apiVersion: v1\nkind: Pod\n") {
		t.Fatalf("manifest %q %v", cur, err)
	}
	web2 := []byte(nsPod("default", "web", "img:2"))
	if _, err := s.Put("Pod", "default", "web", web2, PutOptions{Base: []byte("stale"), Replace: true}); pushCode(err) != http.StatusConflict {
		t.Fatalf("stale base: %v", err)
	}
	if put, err := s.Put("Pod", "default", "web", web2, PutOptions{Base: cur, Replace: true}); err != nil || put.Created {
		t.Fatalf("replace on base: %v %v", put.Created, err)
	}
	bad := []byte(nsPod("default", "web", ""))
	_, err = s.Put("Pod", "default", "web", bad, PutOptions{Replace: true})
	var pe *PushError
	if !errors.As(err, &pe) || pe.Code != http.StatusUnprocessableEntity || len(pe.Errors) == 0 || pe.Errors[0].Field != "spec.containers[0].image" {
		t.Fatalf("invalid: %#v", err)
	}
	if _, err := s.Manifest("Pod", "default", "../web"); pushCode(err) != http.StatusBadRequest {
		t.Fatalf("traversal name: %v", err)
	}
	if err := s.Delete("Pod", "default", "web", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Manifest("Pod", "default", "web"); err != nil {
		t.Fatalf("dry-run delete removed it: %v", err)
	}
	if err := s.Delete("Pod", "default", "web", false); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("Pod", "default", "web", false); pushCode(err) != http.StatusNotFound {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := s.Put("Pod", "default", "web", web, PutOptions{Base: []byte("x"), Replace: true}); pushCode(err) != http.StatusNotFound {
		t.Fatalf("base of an absent pod: %v", err)
	}
}

// TestPushPutTooLarge: the programmatic Put keeps the routes' size limit.
func TestPushPutTooLarge(t *testing.T) {
	s := NewPushSource("push", filepath.Join(t.TempDir(), "push"), Options{})
	big := []byte(nsPod("default", "web", "img:1") + "# " + strings.Repeat("x", MaxPushBytes) + "\n")
	if _, err := s.Put("Pod", "default", "web", big, PutOptions{}); pushCode(err) != http.StatusRequestEntityTooLarge {
		t.Fatalf("large manifest: %v", err)
	}
}
