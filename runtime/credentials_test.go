package runtime

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/registry"
)

func writeConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	cfg := `{"auths": {
		"https://index.docker.io/v1/": {"auth": "` + base64.StdEncoding.EncodeToString([]byte("hubuser:hubpass")) + `"},
		"registry.example.com:5000": {"username": "u", "password": "p"}
	}}`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCredentialsForImage(t *testing.T) {
	c, err := LoadCredentials(writeConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	for image, user := range map[string]string{
		"nginx":              "hubuser",
		"library/nginx:1.27": "hubuser",
		"docker.io/foo/bar@sha256:" + strings.Repeat("a", 64): "hubuser",
		"registry.example.com:5000/team/app:2":                "u",
		"other.example.com/app:1":                             "",
	} {
		a, ok := c.For(image)
		if a.Username != user || ok != (user != "") {
			t.Errorf("%s: user %q ok %v, want %q", image, a.Username, ok, user)
		}
	}
	if _, err := LoadCredentials(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("missing file accepted")
	}
}

// TestPullSendsRegistryAuth checks the X-Registry-Auth header berth sends to
// the engine, using a stand-in for the engine's HTTP API (no registry is
// reachable here, so a real pull with credentials cannot be observed).
func TestPullSendsRegistryAuth(t *testing.T) {
	var mu sync.Mutex
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", "1.41")
		if strings.HasSuffix(r.URL.Path, "/images/create") {
			mu.Lock()
			got = r.Header.Get("X-Registry-Auth")
			mu.Unlock()
			w.Write([]byte(`{"status":"Downloaded"}` + "\n"))
			return
		}
		w.Write([]byte("OK"))
	}))
	defer srv.Close()
	d, err := NewDocker("tcp://" + strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	creds, _ := LoadCredentials(writeConfig(t))
	d.SetCredentials(creds)
	if err := d.PullImage(context.Background(), "registry.example.com:5000/team/app:2", nil, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	raw, err := base64.URLEncoding.DecodeString(got)
	if err != nil {
		t.Fatalf("header %q: %v", got, err)
	}
	var a registry.AuthConfig
	if err := json.Unmarshal(raw, &a); err != nil || a.Username != "u" || a.Password != "p" {
		t.Fatalf("auth sent %+v (%v)", a, err)
	}
}

func TestPullFailsWhenTheRegistryStalls(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", "1.41")
		if strings.HasSuffix(r.URL.Path, "/images/create") {
			w.Write([]byte(`{"status":"Pulling fs layer"}` + "\n"))
			w.(http.Flusher).Flush()
			<-r.Context().Done() // then nothing, as a stalled transfer
			return
		}
		w.Write([]byte("OK"))
	}))
	defer srv.Close()
	d, err := NewDocker("tcp://" + strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	old := PullStall
	PullStall = 300 * time.Millisecond
	defer func() { PullStall = old }()
	err = d.PullImage(context.Background(), "registry.example.com/app:1", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "no progress") {
		t.Fatalf("stalled pull: %v", err)
	}
}
