// Package termmsg reads what an exited container left as its termination
// message, as the kubelet does: the end of the file bound at its
// terminationMessagePath, or the end of its logs.
package termmsg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podfs"
	"github.com/berth-dev/berth/runtime"
)

// Termination message limits, as the kubelet's
// (MaxContainerTerminationMessageLength, ...LogLength, ...LogLines).
const (
	maxMessage  = 4096
	maxLogBytes = 2048
	logLines    = 80
)

// Logs is the engine's log reader.
type Logs interface {
	Logs(ctx context.Context, id string, opts runtime.LogOptions) (io.ReadCloser, error)
}

// Reader reads termination messages: the files under root_dir (Paths),
// the logs from the engine.
type Reader struct {
	Paths podfs.Root
	Logs  Logs
}

// Message is what exited container ct of spec ctr left, as the
// kubelet reads it: the end (at most 4096 bytes) of the file bound at its
// terminationMessagePath; under FallbackToLogsOnError, when that is empty
// and the container failed (and did run), the end of its logs instead.
func (r Reader) Message(ctx context.Context, ct *model.Container, ctr *v1.Container) string {
	path := r.Path(ct.PodUID, ct.Name, ct.Attempt)
	data, err := readTail(path, maxMessage)
	switch {
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return fmt.Sprintf("Error on reading termination log %s: %v", path, err)
	case len(data) > 0:
		return string(data)
	case ctr.TerminationMessagePolicy == v1.TerminationMessageFallbackToLogsOnError && ct.ExitCode != 0 && ct.Error == "":
		return r.logTail(ctx, ct.ID)
	}
	return ""
}

// readTail reads the last max bytes of the file at path.
func readTail(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		if _, err := f.Seek(-max, io.SeekEnd); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// logTail is the end of container id's last 80 log lines, at most 2048
// bytes.
func (r Reader) logTail(ctx context.Context, id string) string {
	rc, err := r.Logs.Logs(ctx, id, runtime.LogOptions{TailLines: logLines})
	if err != nil {
		return fmt.Sprintf("Error on reading termination message from logs: %v", err)
	}
	defer rc.Close()
	var tail []byte
	buf := make([]byte, 8192)
	for {
		n, err := rc.Read(buf)
		tail = append(tail, buf[:n]...)
		if len(tail) > maxLogBytes {
			tail = append(tail[:0], tail[len(tail)-maxLogBytes:]...)
		}
		if errors.Is(err, io.EOF) {
			return string(tail)
		}
		if err != nil {
			return fmt.Sprintf("Error on reading termination message from logs: %v", err)
		}
	}
}

// Path is the host file bound at the instance's
// terminationMessagePath, for readers: "" (where no file is) when podfs
// refuses the names.
func (r Reader) Path(podUID, name string, attempt int) string {
	p, _ := r.Paths.TerminationLog(podUID, name, attempt)
	return p
}
