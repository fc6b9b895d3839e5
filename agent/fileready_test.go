package agent

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
)

// A missing sources.file.path keeps /readyz at 503 naming it, and the agent
// ready once the directory is created.
func TestMissingPodsPathIsNotReady(t *testing.T) {
	cfg := testConfig(t)
	cfg.FilePath = filepath.Join(t.TempDir(), "pods")
	a, err := New(cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", cfg.ServerPort)
	readyz := func() (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	want := "sources.file.path " + cfg.FilePath + " does not exist"
	testutil.WaitFor(t, 30*time.Second, "/readyz naming the missing path", func() bool {
		code, body := readyz()
		return code == http.StatusServiceUnavailable && strings.Contains(body, want) && !strings.Contains(body, "not synced") && !strings.Contains(body, "docker")
	})
	if err := os.Mkdir(cfg.FilePath, 0o755); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "/readyz once the path exists", func() bool {
		code, _ := readyz()
		return code == http.StatusOK
	})
}
