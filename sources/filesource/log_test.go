package filesource

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"

	"github.com/berth-dev/berth/sources"
)

// A source logs through the logger it was given, with its name, and never
// through the process-wide default.
func TestSourceLogsThroughInjectedLogger(t *testing.T) {
	var injected, global testutil.SyncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&global, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	dir := t.TempDir()
	write(t, dir, "pod.yaml.swp", podManifest("swap", "busybox"))
	log := slog.New(slog.NewTextHandler(&injected, nil))
	u := <-runSource(t, New("file", dir, time.Hour, sources.Options{Log: log}))
	if len(u.Pods) != 0 {
		t.Fatalf("swap file read: %+v", u)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(injected.String(), "not reading a directory entry") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := injected.String(); !strings.Contains(got, "not reading a directory entry") || !strings.Contains(got, "source=file") {
		t.Fatalf("injected logger got %q", got)
	}
	if got := global.String(); got != "" {
		t.Fatalf("the default logger got %q", got)
	}
}
