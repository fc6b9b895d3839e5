// Package model holds berth's state types: desired pods, the actual
// containers seen on the runtime, and the sources that feed pods. It imports
// nothing of berth, so every package can share them.
//
// Values read from the store are shared with it: never mutate them; copy,
// change the copy, and write it back through a store method.
package model

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// Pod is one desired pod as accepted from a source, with the status berth
// observed for it. Spec is validated and defaulted before it is stored.
type Pod struct {
	Version
	Key    string // "namespace/name"
	Source string // name of the source that owns the pod
	Origin string // file, URL or key the pod came from
	Spec   *v1.Pod
	// SeenAt is when this pod (this UID) was first accepted.
	SeenAt time.Time
	// Error is the last rejected update of this pod, kept while the last good
	// spec keeps running. Empty when the latest update was accepted.
	Error  string
	Status v1.PodStatus
	// StartedAt is when all containers first ran; zero until then.
	StartedAt time.Time
	// Terminal is the phase (Succeeded or Failed) the pod ended in while its
	// spec hashed to TerminalSpec. While the spec is unchanged the phase
	// stays and none of the pod's containers runs again, as in the kubelet;
	// an edited spec is a new incarnation (as a static pod edit is a new pod
	// for the kubelet).
	Terminal     v1.PodPhase
	TerminalSpec string
	// TerminationMessages holds the termination message of each exited
	// container of the pod, by container ID, read once when the exit was
	// first observed ("" when it left none). Never mutated: replaced whole.
	TerminationMessages map[string]string
	// Refs are the ObjectRefs of the ConfigMaps and Secrets the spec uses
	// (volumes, env, envFrom, imagePullSecrets), set at admission: a
	// change of one of them notifies the pod.
	Refs []string
}

// WithObserved returns a copy of p carrying from's observed state (status,
// times, terminal phase, termination messages): for a new spec of the same
// UID, whose observations are the controller's, not the source's.
func (p *Pod) WithObserved(from *Pod) *Pod {
	cp := *p
	cp.SeenAt, cp.Status, cp.StartedAt = from.SeenAt, from.Status, from.StartedAt
	cp.Terminal, cp.TerminalSpec, cp.TerminationMessages = from.Terminal, from.TerminalSpec, from.TerminationMessages
	return &cp
}

// Container states as reported by Docker.
const (
	StateCreated    = "created"
	StateRunning    = "running"
	StateExited     = "exited"
	StatePaused     = "paused"
	StateRestarting = "restarting"
	StateRemoving   = "removing"
	StateDead       = "dead"
)

// SandboxName is the container name of a pod's network sandbox.
const SandboxName = "POD"

// Container is one managed container as last seen on the runtime.
type Container struct {
	Version
	ID           string
	DockerName   string
	PodKey       string // from labels; "namespace/name"
	PodUID       string
	Name         string // container name inside the pod; SandboxName for the sandbox
	Hash         string
	Source       string
	Attempt      int
	RestartCount int
	Image        string
	ImageID      string
	// IP is the container's own address on an engine network; empty for
	// containers that join another's network namespace or the host's.
	IP         string
	State      string
	ExitCode   int
	OOMKilled  bool
	Error      string
	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	Labels     map[string]string
	// Seq is the engine event sequence this row was observed as of: the
	// sequence of the event it came from, or the store's Seq read just
	// before the inspect, list or engine call that reported it. It orders
	// the writers of actual state by the engine's event stream, not by any
	// clock (see store.Store.ApplyContainer).
	Seq uint64
}

// Tombstone remembers that a container was gone as of sequence Seq, so
// that an older observation of it cannot bring it back.
type Tombstone struct {
	ID  string
	Seq uint64
}

// Running reports whether the container is running (or being restarted by
// the engine, which berth never asks for).
func (c *Container) Running() bool {
	return c.State == StateRunning || c.State == StateRestarting || c.State == StatePaused
}

// Source is the sync state of one desired-state source.
type Source struct {
	Version
	Name string
	// Synced is true once the source delivered its first complete set since
	// start; before that berth never deletes the source's pods.
	Synced   bool
	LastSync time.Time
	Updates  int64
	// Errors are the current manifest errors of the source, one per origin
	// or pod, as human-readable "origin: pod: field: message" lines.
	Errors []string
	// LastError is the last failure to read the source; cleared by the next
	// successful read.
	LastError string
	// Refusals are the manifests of Errors refused (not decoded, invalid,
	// or refused by admission), without the warnings of admitted pods and
	// of the source.
	Refusals []string
	// Since is when State last changed, as the store stamps it on write.
	Since time.Time
}

// The states of a source (Source.State), as the node's source conditions
// give them for a reason.
const (
	SourceNotSynced  = "SourceNotSynced"
	SourceUnreadable = "SourceUnreadable"
	SourceRefusing   = "ManifestRefused"
	SourceSynced     = "SourceSynced"
)

// State is the source's state, the first that holds of: failing to read,
// not synced yet, refusing some manifests, synced with every manifest
// admitted.
func (s *Source) State() string {
	switch {
	case s.LastError != "":
		return SourceUnreadable
	case !s.Synced:
		return SourceNotSynced
	case len(s.Refusals) > 0:
		return SourceRefusing
	}
	return SourceSynced
}
