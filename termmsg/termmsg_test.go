package termmsg

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podfs"
	"github.com/berth-dev/berth/runtime"
)

// The message is the end of the file, at most 4096 bytes; with
// FallbackToLogsOnError and an empty file, the end of the logs of a failed
// container, at most 2048 bytes; nothing for one that succeeded.
func TestMessage(t *testing.T) {
	logs := logText{}
	r := Reader{Paths: podfs.New(t.TempDir()), Logs: logs}
	ct := &model.Container{ID: "c1", PodUID: "uid-1", Name: "a", ExitCode: 1}
	path := r.Path(ct.PodUID, ct.Name, ct.Attempt)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("x", 5000)+"the end"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := &v1.Container{Name: "a", TerminationMessagePolicy: v1.TerminationMessageFallbackToLogsOnError}
	if got := r.Message(t.Context(), ct, spec); len(got) != maxMessage || !strings.HasSuffix(got, "the end") {
		t.Fatalf("message of %d bytes ending %q, want the file's last %d", len(got), got[max(0, len(got)-8):], maxMessage)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	logs["c1"] = strings.Repeat("y", 3000) + "panic: boom\n"
	if got := r.Message(t.Context(), ct, spec); len(got) != maxLogBytes || !strings.HasSuffix(got, "panic: boom\n") {
		t.Fatalf("message of %d bytes, want the logs' last %d", len(got), maxLogBytes)
	}
	ct.ExitCode = 0
	if got := r.Message(t.Context(), ct, spec); got != "" {
		t.Fatalf("a success read %q", got)
	}
}

// logText is an engine whose containers logged the text it holds.
type logText map[string]string

func (l logText) Logs(_ context.Context, id string, _ runtime.LogOptions) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader(l[id])), nil
}
