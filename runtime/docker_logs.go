package runtime

import (
	"context"
	"fmt"
	"io"
	"strconv"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
)

// Logs implements Runtime. The engine's multiplexed stream is split back
// into plain bytes (stdout and stderr interleaved as written).
func (d *dockerStreams) Logs(ctx context.Context, id string, opts LogOptions) (io.ReadCloser, error) {
	tail := "all"
	if opts.TailLines >= 0 {
		tail = strconv.Itoa(opts.TailLines)
	}
	rc, err := d.cli.ContainerLogs(ctx, id, container.LogsOptions{
		ShowStdout: true, ShowStderr: true, Follow: opts.Follow, Tail: tail, Timestamps: opts.Timestamps,
	})
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil, notFound("container", id, err)
		}
		return nil, fmt.Errorf("logs of %s: %w", id, err)
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(pw, pw, rc)
		rc.Close()
		pw.CloseWithError(err)
	}()
	return &logStream{PipeReader: pr, src: rc}, nil
}

type logStream struct {
	*io.PipeReader
	src io.Closer
}

func (l *logStream) Close() error {
	l.src.Close()
	return l.PipeReader.Close()
}
