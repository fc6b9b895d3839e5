package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/berth-dev/berth/config"
	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/runtime"
)

// testConfig is the default configuration with a file source in a fresh
// directory, a fresh root and a free loopback port, on the real engine.
func testConfig(t *testing.T) *config.Config {
	t.Helper()
	d, err := runtime.NewDocker("")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.Ping(ctx); err != nil {
		t.Fatalf("docker engine not reachable (scripts/ensure-deps.sh starts it): %v", err)
	}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	config.BindFlags(fs)
	cfg, err := config.Load(fs)
	if err != nil {
		t.Fatal(err)
	}
	cfg.NodeName = "agent-test-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	cfg.FilePath, cfg.RootDir = t.TempDir(), t.TempDir()
	cfg.ServerAddress, cfg.ServerPort = "127.0.0.1", testutil.FreePort(t)
	cfg.CadvisorEnabled = false
	return cfg
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// An agent serves, becomes ready, and on cancel stops every part and
// returns nil.
func TestAgentRunsAndStops(t *testing.T) {
	cfg := testConfig(t)
	a, err := New(cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", cfg.ServerPort)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent not ready: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if _, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", cfg.ServerPort), time.Second); err == nil {
		t.Fatal("API still listening after Run returned")
	}
}

// A port that is taken is Run's error, at once, and not a hang.
func TestAgentRunFailsOnTakenPort(t *testing.T) {
	cfg := testConfig(t)
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", cfg.ServerPort))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	a, err := New(cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = a.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "server:") || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run on a taken port: %v", err)
	}
}

// A bad configuration is New's error, naming the key.
func TestNewAgentRefusesBadConfig(t *testing.T) {
	cfg := testConfig(t)
	cfg.DockerConfig = cfg.RootDir + "/missing.json"
	if _, err := New(cfg, quiet()); err == nil || !strings.Contains(err.Error(), "docker.config") {
		t.Fatalf("missing docker.config: %v", err)
	}
}
