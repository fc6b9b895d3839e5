package informer

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/sources/filesource"
	"github.com/berth-dev/berth/store"
)

// A rejected manifest of the file source is one line of the agent log,
// however many parts see it.
func TestRejectedManifestIsLoggedOnce(t *testing.T) {
	dir := t.TempDir()
	bad := "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: [{name: a, image: \"\"}]}\n"
	if err := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs testutil.SyncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	st, _ := store.New(nil)
	inf := NewSourceInformer(st, nil, nil, log)
	if err := inf.Register("file"); err != nil {
		t.Fatal(err)
	}
	src := filesource.New("file", dir, time.Hour, sources.Options{Log: log})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	updates := make(chan sources.Update)
	go func() { _ = src.Run(ctx, updates) }()
	go inf.Run(ctx, updates)
	testutil.WaitFor(t, 5*time.Second, "the informer's line", func() bool {
		return strings.Contains(logs.String(), `msg="manifest rejected" component=source-informer`)
	})
	if n := strings.Count(logs.String(), "manifest rejected"); n != 1 {
		t.Fatalf("%d lines say the manifest was rejected, want 1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "bad.yaml: default/bad: spec.containers[0].image: Required value") {
		t.Fatalf("the line does not name the file and field:\n%s", logs.String())
	}
}
