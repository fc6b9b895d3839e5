package stats

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The types below are a JSON-compatible subset of the kubelet's Summary API
// (k8s.io/kubelet/pkg/apis/stats/v1alpha1), so tools that read a kubelet's
// /stats/summary can read berth's. Pointer fields are omitted when unknown.

// Summary is the answer of GET /stats/summary.
type Summary struct {
	Node NodeStats  `json:"node"`
	Pods []PodStats `json:"pods"`
}

// NodeStats are the machine-wide statistics (cAdvisor's root cgroup).
type NodeStats struct {
	NodeName  string        `json:"nodeName"`
	StartTime metav1.Time   `json:"startTime"`
	CPU       *CPUStats     `json:"cpu,omitempty"`
	Memory    *MemoryStats  `json:"memory,omitempty"`
	Network   *NetworkStats `json:"network,omitempty"`
	// Fs is the filesystem holding berth's root_dir.
	Fs *FsStats `json:"fs,omitempty"`
}

// PodReference names a pod.
type PodReference struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	UID       string `json:"uid"`
}

// PodStats are the statistics of one pod. CPU and Memory are the sums over
// all the pod's running containers including the sandbox; Network is the
// sandbox's (the pod's network namespace).
type PodStats struct {
	PodRef PodReference `json:"podRef"`
	// Source is the berth source of the pod's containers (not in the
	// kubelet's JSON): with PodRef.UID it tells this pod from another
	// that held its name.
	Source     string           `json:"-"`
	StartTime  metav1.Time      `json:"startTime"`
	Containers []ContainerStats `json:"containers"`
	CPU        *CPUStats        `json:"cpu,omitempty"`
	Memory     *MemoryStats     `json:"memory,omitempty"`
	Network    *NetworkStats    `json:"network,omitempty"`
}

// ContainerStats are the statistics of one running app container.
type ContainerStats struct {
	Name      string       `json:"name"`
	StartTime metav1.Time  `json:"startTime"`
	CPU       *CPUStats    `json:"cpu,omitempty"`
	Memory    *MemoryStats `json:"memory,omitempty"`
	// Rootfs is the container's writable layer (when disk usage is measured).
	Rootfs *FsStats `json:"rootfs,omitempty"`
}

// CPUStats: UsageNanoCores is the recent rate (needs two samples, so it is
// absent right after a container appears); UsageCoreNanoSeconds is
// cumulative.
type CPUStats struct {
	Time                 metav1.Time `json:"time"`
	UsageNanoCores       *uint64     `json:"usageNanoCores,omitempty"`
	UsageCoreNanoSeconds *uint64     `json:"usageCoreNanoSeconds,omitempty"`
}

// MemoryStats in bytes. AvailableBytes is limit (or machine memory) minus
// the working set.
type MemoryStats struct {
	Time            metav1.Time `json:"time"`
	AvailableBytes  *uint64     `json:"availableBytes,omitempty"`
	UsageBytes      *uint64     `json:"usageBytes,omitempty"`
	WorkingSetBytes *uint64     `json:"workingSetBytes,omitempty"`
	RSSBytes        *uint64     `json:"rssBytes,omitempty"`
	PageFaults      *uint64     `json:"pageFaults,omitempty"`
	MajorPageFaults *uint64     `json:"majorPageFaults,omitempty"`
}

// InterfaceStats are the counters of one network interface.
type InterfaceStats struct {
	Name     string  `json:"name"`
	RxBytes  *uint64 `json:"rxBytes,omitempty"`
	RxErrors *uint64 `json:"rxErrors,omitempty"`
	TxBytes  *uint64 `json:"txBytes,omitempty"`
	TxErrors *uint64 `json:"txErrors,omitempty"`
}

// NetworkStats: the inline InterfaceStats are the default interface's (eth0,
// else the busiest non-loopback interface); Interfaces lists them all.
type NetworkStats struct {
	Time           metav1.Time `json:"time"`
	InterfaceStats `json:",inline"`
	Interfaces     []InterfaceStats `json:"interfaces,omitempty"`
}

// FsStats of a filesystem or a container layer, in bytes and inodes.
type FsStats struct {
	Time           metav1.Time `json:"time"`
	AvailableBytes *uint64     `json:"availableBytes,omitempty"`
	CapacityBytes  *uint64     `json:"capacityBytes,omitempty"`
	UsedBytes      *uint64     `json:"usedBytes,omitempty"`
	InodesFree     *uint64     `json:"inodesFree,omitempty"`
	Inodes         *uint64     `json:"inodes,omitempty"`
	InodesUsed     *uint64     `json:"inodesUsed,omitempty"`
}
