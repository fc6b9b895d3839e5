package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podconfig"
	"github.com/berth-dev/berth/podfs"
	"github.com/berth-dev/berth/podstatus"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

// statusWriter writes pods' statuses (podstatus) into the store, with the
// termination messages of exited containers it reads from their files or
// logs. It reads Config (the clock, the node's IP, metrics) as it is at
// each call.
type statusWriter struct {
	cfg   *Config
	store *store.Store
	rt    runtime.Runtime
	paths podfs.Root
	life  *lifeLog
}

// Termination message limits, as the kubelet's
// (MaxContainerTerminationMessageLength, ...LogLength, ...LogLines).
const (
	maxTerminationMessage  = 4096
	maxTerminationLogBytes = 2048
	terminationLogLines    = 80
)

// write records the pod's status, computed (podstatus.Apply) from
// byName (its containers as currentContainers returns them), what this
// reconcile learned (in) and the pod's row as stored, to whose termination
// messages messages, newly read, are added. It records the pod start
// latency too.
func (w *statusWriter) write(p *model.Pod, in *podstatus.Input, byName map[string][]*model.Container, messages map[string]string) {
	now := w.cfg.Clock.Now()
	in.Now, in.NodeIP = now, w.cfg.NodeInfo.IP
	var observed, changed bool
	var was, is v1.PodStatus
	_, _ = w.store.UpdatePod(p.Key, func(cur *model.Pod) bool {
		if cur.Spec.UID != p.Spec.UID {
			return false
		}
		before := *cur
		defer func() { was, is = before.Status, cur.Status }()
		in.SpecHash, in.SandboxHash, in.QOSClass = specHash(cur.Spec), podconfig.SandboxHash(cur.Spec), podconfig.QOSClass(cur.Spec)
		observed = podstatus.Apply(cur, byName, messages, in)
		changed = podstatus.Changed(&before, cur)
		return changed
	})
	if changed {
		w.life.status(p.Key, string(p.Spec.UID), &was, &is, p.SeenAt, now)
	}
	if observed {
		w.cfg.Metrics.PodStarted(now.Sub(p.SeenAt))
	}
}

// newMessages reads the termination messages of the exited
// instances of pod's containers that status shows (the latest two of
// each) and whose message the pod's row does not hold yet, by ID.
func (w *statusWriter) newMessages(ctx context.Context, key string, pod *v1.Pod, byName map[string][]*model.Container) map[string]string {
	var known map[string]string
	if cur, _ := w.store.Pod(nil, key); cur != nil && cur.Spec.UID == pod.UID {
		known = cur.TerminationMessages
	}
	out := map[string]string{}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			inst := byName[list[i].Name]
			for _, ct := range inst[:min(2, len(inst))] {
				if _, ok := known[ct.ID]; ok || !exited(ct) {
					continue
				}
				out[ct.ID] = w.message(ctx, ct, &list[i])
			}
		}
	}
	return out
}

func exited(ct *model.Container) bool { return !ct.Running() && ct.State != model.StateCreated }

// message is what exited container ct of spec ctr left, as the
// kubelet reads it: the end (at most 4096 bytes) of the file bound at its
// terminationMessagePath; under FallbackToLogsOnError, when that is empty
// and the container failed (and did run), the end of its logs instead.
func (w *statusWriter) message(ctx context.Context, ct *model.Container, ctr *v1.Container) string {
	path := w.logPath(ct.PodUID, ct.Name, ct.Attempt)
	data, err := readTail(path, maxTerminationMessage)
	switch {
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return fmt.Sprintf("Error on reading termination log %s: %v", path, err)
	case len(data) > 0:
		return string(data)
	case ctr.TerminationMessagePolicy == v1.TerminationMessageFallbackToLogsOnError && ct.ExitCode != 0 && ct.Error == "":
		return w.logTail(ctx, ct.ID)
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
func (w *statusWriter) logTail(ctx context.Context, id string) string {
	rc, err := w.rt.Logs(ctx, id, runtime.LogOptions{TailLines: terminationLogLines})
	if err != nil {
		return fmt.Sprintf("Error on reading termination message from logs: %v", err)
	}
	defer rc.Close()
	var tail []byte
	buf := make([]byte, 8192)
	for {
		n, err := rc.Read(buf)
		tail = append(tail, buf[:n]...)
		if len(tail) > maxTerminationLogBytes {
			tail = append(tail[:0], tail[len(tail)-maxTerminationLogBytes:]...)
		}
		if errors.Is(err, io.EOF) {
			return string(tail)
		}
		if err != nil {
			return fmt.Sprintf("Error on reading termination message from logs: %v", err)
		}
	}
}

// logPath is the host file bound at the instance's
// terminationMessagePath, for readers: "" (where no file is) when podfs
// refuses the names.
func (w *statusWriter) logPath(podUID, name string, attempt int) string {
	p, _ := w.paths.TerminationLog(podUID, name, attempt)
	return p
}
