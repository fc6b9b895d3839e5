package fake

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/berth-dev/berth/runtime"
)

// Logs returns what SetLogs recorded for id.
func (f *streamFake) Logs(ctx context.Context, id string, opts runtime.LogOptions) (io.ReadCloser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call("Logs")
	if _, ok := f.containers[id]; !ok {
		return nil, fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	return io.NopCloser(strings.NewReader(f.logs[id])), nil
}

// SetLogs sets the log text of a container.
func (f *streamFake) SetLogs(id, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs[id] = text
}
