package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/config"
	"github.com/berth-dev/berth/internal/testutil"
)

func TestRunRefusesOpenAddressWithoutToken(t *testing.T) {
	cfg := &config.Config{ServerAddress: "0.0.0.0", RootDir: t.TempDir(), LogLevel: "error", LogFormat: "text"}
	err := run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "server.token_file") {
		t.Fatalf("run on 0.0.0.0 without a token: %v", err)
	}
}

// berth refuses to start with a token file group or others can read,
// naming the key and the mode.
func TestRunRefusesReadableTokenFiles(t *testing.T) {
	for _, key := range []string{"server.token_file", "sources.push.token_file"} {
		t.Run(key, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "token")
			if err := os.WriteFile(path, []byte("tok\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := &config.Config{ServerAddress: "127.0.0.1", RootDir: t.TempDir(), LogLevel: "error", LogFormat: "text", PushEnabled: true}
			if key == "server.token_file" {
				cfg.TokenFile = path
			} else {
				cfg.PushTokenFile = path
			}
			err := run(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), key+": "+path+" has mode 0644") {
				t.Fatalf("run with a 0644 %s: %v", key, err)
			}
		})
	}
}

// `berth run` with the push source and no token file exits before
// serving anything, naming the key.
func TestRunRefusesAnonymousPush(t *testing.T) {
	// Should it start after all, it touches nothing: its own port, dirs,
	// and no engine.
	for k, v := range map[string]string{"BERTH_SOURCES_PUSH_ENABLED": "true", "BERTH_ROOT_DIR": t.TempDir(),
		"BERTH_SOURCES_FILE_PATH": t.TempDir(), "BERTH_SERVER_PORT": fmt.Sprint(testutil.FreePort(t)),
		"BERTH_DOCKER_HOST": "unix:///nonexistent/docker.sock", "BERTH_CADVISOR_ENABLED": "false"} {
		t.Setenv(k, v)
	}
	done := make(chan error, 1)
	go func() { _, _, err := execute(runCmd()); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "sources.push.token_file") {
			t.Fatalf("berth run with anonymous push: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("berth run with anonymous push started")
	}
}
