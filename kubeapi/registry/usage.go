package registry

import (
	"context"
	"time"
)

// UsageSource gives the resource usage metrics.k8s.io serves: the agent
// adapts its stats provider (the numbers of /metrics/resource) to it.
type UsageSource interface {
	// Usage samples the node and its pods; an error means no stats.
	Usage(ctx context.Context) (*Usage, error)
}

// Usage is one sample of the node and its pods.
type Usage struct {
	Node NodeUsage
	Pods []PodUsage
}

// NodeUsage is the node's CPU rate and memory working set; Time is when
// they were measured, Window over which the rate was computed.
type NodeUsage struct {
	Time                  time.Time
	Window                time.Duration
	CPUNanoCores          uint64
	MemoryBytes           uint64
	CPUKnown, MemoryKnown bool
}

// PodUsage is one pod's containers' usage: those labelled with one pod
// key, UID and source. Two pods may share a key (a removed pod still
// stopping, and the pod that took its name); a pod is served only the
// usage of its own UID and source.
type PodUsage struct {
	Namespace, Name string
	UID, Source     string
	Time            time.Time
	Window          time.Duration
	Containers      []ContainerUsage
}

// ContainerUsage is one container's CPU rate (nanocores) and working set
// (bytes).
type ContainerUsage struct {
	Name         string
	CPUNanoCores uint64
	MemoryBytes  uint64
}
