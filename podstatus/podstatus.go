// Package podstatus computes a pod's status the way the kubelet does, from
// its row in the store (desired spec, previous status, terminal phase), its
// containers as the engine reports them and the probes' verdicts. It is
// pure: no I/O, no clock; what needs either comes in through Input.
package podstatus

import (
	"maps"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/berth-dev/berth/model"
)

// Input is what one reconcile learned, for the status it writes, and what
// is known of the row's spec. The spec's facts (SpecHash, SandboxHash,
// QOSClass) must be those of the row the status is computed for, not of an
// older read of it.
type Input struct {
	// Waiting are the waiting reasons the reconcile set, by container name.
	Waiting map[string]v1.ContainerStateWaiting
	// FailedInit: the plan found an init container failed for good.
	FailedInit bool
	// FailReason and FailMessage, when FailReason is set, fail the pod with
	// them: the plan ended it (an exceeded deadline, an eviction).
	FailReason, FailMessage string
	// Started and Ready report whether the startup and the readiness probe
	// of container id passed (nil: none did).
	Started, Ready func(id string) bool
	// ImageID resolves an image reference for containers whose row lacks
	// the image's ID (rows built from events).
	ImageID func(ref string) (string, bool)
	// NodeIP is status.hostIP, and podIP under hostNetwork.
	NodeIP string
	// Now stamps the conditions whose status flipped, and StartedAt.
	Now time.Time
	// SpecHash identifies the row's spec: a terminal phase recorded for it
	// stays, and a new one is recorded for it.
	SpecHash string
	// SandboxHash is the hash a sandbox made for the row's spec carries.
	SandboxHash string
	// QOSClass is the row's spec's QoS class.
	QOSClass v1.PodQOSClass
	// ContainerHash is the hash an instance made for the row's spec of
	// container c carries (nil: instances are not compared): an instance of
	// an older spec is on its way out, never ready.
	ContainerHash func(c *v1.Container) string
}

// Apply sets the status of pod row cur from its containers byName (newest
// first per name) and in, with what goes with it: its termination messages
// (added, newly read, to those kept, restricted to containers still
// listed), its terminal phase (recorded for the spec once Succeeded or
// Failed) and StartedAt (in.Now, the first time every container runs). It
// reports whether StartedAt was set now.
func Apply(cur *model.Pod, byName map[string][]*model.Container, added map[string]string, in *Input) (started bool) {
	cur.TerminationMessages = keptMessages(cur.TerminationMessages, added, byName)
	status := Compute(cur, byName, in)
	cur.Status = status
	if (status.Phase == v1.PodSucceeded || status.Phase == v1.PodFailed) && !terminal(cur, in.SpecHash) {
		cur.Terminal, cur.TerminalSpec = status.Phase, in.SpecHash
	}
	if allRunning(&status) && cur.StartedAt.IsZero() {
		cur.StartedAt = in.Now
		return true
	}
	return false
}

// Changed reports whether Apply changed what the pod's row records of its
// status, from old to cur. Without a change nothing should be written: a
// write holds the store's lock and wakes every watcher.
func Changed(old, cur *model.Pod) bool {
	return old.Terminal != cur.Terminal || old.TerminalSpec != cur.TerminalSpec ||
		!old.StartedAt.Equal(cur.StartedAt) ||
		!maps.Equal(old.TerminationMessages, cur.TerminationMessages) ||
		!apiequality.Semantic.DeepEqual(old.Status, cur.Status)
}

// terminal reports whether p ended in a phase recorded for the spec
// specHash identifies.
func terminal(p *model.Pod, specHash string) bool {
	return p.Terminal != "" && p.TerminalSpec == specHash
}

func allRunning(s *v1.PodStatus) bool {
	if s.Phase != v1.PodRunning {
		return false
	}
	for _, cs := range s.ContainerStatuses {
		if cs.State.Running == nil {
			return false
		}
	}
	return true
}

// keptMessages is old with added, restricted to containers still in byName.
func keptMessages(old, added map[string]string, byName map[string][]*model.Container) map[string]string {
	out := map[string]string{}
	for _, list := range byName {
		for _, ct := range list {
			if m, ok := added[ct.ID]; ok {
				out[ct.ID] = m
			} else if m, ok := old[ct.ID]; ok {
				out[ct.ID] = m
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
