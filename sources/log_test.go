package sources

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
)

// A source logs through the logger it was given, with its name, and never
// through the process-wide default.
func TestSourceLogsThroughInjectedLogger(t *testing.T) {
	var injected, global testutil.SyncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&global, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	dir := t.TempDir()
	write(t, dir, "bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: [{name: a}]}\n")
	log := slog.New(slog.NewTextHandler(&injected, nil))
	u := <-runSource(t, NewFileSource("file", dir, time.Hour, Options{Log: log}))
	if len(u.Errors) == 0 {
		t.Fatalf("bad.yaml accepted: %+v", u)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(injected.String(), "manifest rejected") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := injected.String(); !strings.Contains(got, "manifest rejected") || !strings.Contains(got, "source=file") {
		t.Fatalf("injected logger got %q", got)
	}
	if got := global.String(); got != "" {
		t.Fatalf("the default logger got %q", got)
	}
}
