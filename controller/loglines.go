package controller

import (
	"log/slog"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
)

// lifeLog writes the agent log's lines of a pod's life that a level-based
// reconcile sees many times, once each: a crash-loop wait per exited
// instance, a deletion from its first kill to its end. Safe for concurrent
// use.
type lifeLog struct {
	log      *slog.Logger
	mu       sync.Mutex
	backOffs map[string]string    // "podUID/container" -> instance logged
	deleting map[string]time.Time // pod key -> when its deletion began
	wasReady map[string]bool      // pod UIDs ready once
}

func newLifeLog(log *slog.Logger) *lifeLog {
	return &lifeLog{log: log, backOffs: map[string]string{}, deleting: map[string]time.Time{}, wasReady: map[string]bool{}}
}

// backOff logs b of pod key (incarnation uid) unless its instance was.
func (l *lifeLog) backOff(key, uid string, b BackOff) {
	k := uid + "/" + b.Container
	l.mu.Lock()
	seen := l.backOffs[k] == b.Instance
	l.backOffs[k] = b.Instance
	l.mu.Unlock()
	if !seen {
		l.log.Info("back-off restarting failed container", "pod", key, "container", b.Container, "delay", b.Delay)
	}
}

// kills logs what a plan stops: one line per reason naming the running
// containers; the removal of exited ones is a debug line each.
func (l *lifeLog) kills(key string, kills []Kill) {
	var reasons []string
	names := map[string][]string{}
	for _, k := range kills {
		ct := k.Container
		if ct.State != model.StateRunning && ct.State != model.StatePaused {
			l.log.Debug("removing container", "pod", key, "container", ct.Name, "state", ct.State, "reason", k.Reason)
			continue
		}
		if names[k.Reason] == nil {
			reasons = append(reasons, k.Reason)
		}
		names[k.Reason] = append(names[k.Reason], ct.Name)
	}
	for _, r := range reasons {
		l.log.Info("stopping containers", "pod", key, "containers", strings.Join(names[r], ","), "reason", r)
	}
}

// deletionBegins notes when the deletion of pod key began, once.
func (l *lifeLog) deletionBegins(key string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.deleting[key]; !ok {
		l.deleting[key] = now
	}
}

// deleted logs that pod key has no container left, with how long its
// deletion took.
func (l *lifeLog) deleted(key string, now time.Time) {
	l.mu.Lock()
	began, ok := l.deleting[key]
	delete(l.deleting, key)
	l.mu.Unlock()
	if ok {
		l.log.Info("pod deleted", "pod", key, "took", now.Sub(began).Round(time.Millisecond))
	}
}

// declared forgets a deletion of key that a source undid.
func (l *lifeLog) declared(key string) {
	l.mu.Lock()
	delete(l.deleting, key)
	l.mu.Unlock()
}

// forget drops what is kept for pod incarnation uid.
func (l *lifeLog) forget(uid string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.wasReady, uid)
	for k := range l.backOffs {
		if strings.HasPrefix(k, uid+"/") {
			delete(l.backOffs, k)
		}
	}
}

// status logs what changed from before to after in the status of pod key:
// each container instance that exited since, and the pod becoming ready or
// no longer ready; the first readiness of incarnation uid with how long it
// took since the pod was seen. A first status (before has no container)
// logs no exit: those happened before this berth saw the pod.
func (l *lifeLog) status(key, uid string, before, after *v1.PodStatus, seenAt, now time.Time) {
	if len(before.ContainerStatuses)+len(before.InitContainerStatuses) > 0 {
		old := map[string]bool{}
		for _, cs := range allStatuses(before) {
			for _, t := range terminations(cs) {
				old[t.ContainerID] = true
			}
		}
		for _, cs := range allStatuses(after) {
			for _, t := range terminations(cs) {
				if !old[t.ContainerID] {
					old[t.ContainerID] = true
					l.log.Info("container exited", "pod", key, "container", cs.Name, "exitCode", t.ExitCode, "reason", t.Reason)
				}
			}
		}
	}
	was, is := podReady(before), podReady(after)
	switch {
	case is && !was:
		l.mu.Lock()
		again := l.wasReady[uid]
		l.wasReady[uid] = true
		l.mu.Unlock()
		if again {
			l.log.Info("pod ready", "pod", key)
		} else {
			l.log.Info("pod ready", "pod", key, "took", now.Sub(seenAt).Round(time.Millisecond))
		}
	case was && !is:
		l.log.Info("pod no longer ready", "pod", key, "reason", readyReason(after))
	}
}

func allStatuses(s *v1.PodStatus) []v1.ContainerStatus {
	out := append([]v1.ContainerStatus{}, s.InitContainerStatuses...)
	return append(out, s.ContainerStatuses...)
}

// terminations are the ended instances a container status shows.
func terminations(cs v1.ContainerStatus) []*v1.ContainerStateTerminated {
	var out []*v1.ContainerStateTerminated
	for _, t := range []*v1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
		if t != nil && t.ContainerID != "" {
			out = append(out, t)
		}
	}
	return out
}

func podReady(s *v1.PodStatus) bool {
	for _, c := range s.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func readyReason(s *v1.PodStatus) string {
	for _, c := range s.Conditions {
		if c.Type == v1.PodReady {
			if c.Message != "" {
				return c.Reason + ": " + c.Message
			}
			return c.Reason
		}
	}
	return ""
}
