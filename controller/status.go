package controller

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podconfig"
	"github.com/berth-dev/berth/podstatus"
	"github.com/berth-dev/berth/store"
	"github.com/berth-dev/berth/termmsg"
)

// statusWriter writes pods' statuses (podstatus) into the store, with the
// termination messages of exited containers (termmsg). It reads Config (the clock, the node's IP, metrics) as it is at
// each call.
type statusWriter struct {
	cfg   *Config
	store *store.Store
	msgs  termmsg.Reader
	life  *lifeLog
}

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
		spec := cur.Spec
		in.ContainerHash = func(c *v1.Container) string { return podconfig.ContainerHash(spec, c) }
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
				out[ct.ID] = w.msgs.Message(ctx, ct, &list[i])
			}
		}
	}
	return out
}

// Respec is the store's Respec (store.WithRespec): next carries stored's
// observed state, and the containers the edit replaces (every one when it
// changes pod-level fields, which replace the sandbox; else those whose own
// spec changed) are not ready in the write of the edit itself.
func Respec(stored, next *model.Pod, now time.Time) *model.Pod {
	p := next.WithObserved(stored)
	if !anyReady(stored.Status.ContainerStatuses) && !anyReady(stored.Status.InitContainerStatuses) {
		return p
	}
	sandbox := podconfig.SandboxHash(stored.Spec) != podconfig.SandboxHash(next.Spec)
	was, is := replaceable(stored.Spec), replaceable(next.Spec)
	p.Status = podstatus.Edited(next.Spec, &stored.Status, func(name string) bool { return sandbox || was[name] != is[name] }, now)
	return p
}

// replaceable are the hashes of the containers of pod that an edit of
// their own replaces, by name: all but the regular init containers (one
// that completed is not run again).
func replaceable(pod *v1.Pod) map[string]string {
	out := map[string]string{}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; model.IsSidecar(c) {
			out[c.Name] = podconfig.ContainerHash(pod, c)
		}
	}
	for i := range pod.Spec.Containers {
		out[pod.Spec.Containers[i].Name] = podconfig.ContainerHash(pod, &pod.Spec.Containers[i])
	}
	return out
}

func anyReady(statuses []v1.ContainerStatus) bool {
	for _, cs := range statuses {
		if cs.Ready {
			return true
		}
	}
	return false
}

func exited(ct *model.Container) bool { return !ct.Running() && ct.State != model.StateCreated }
