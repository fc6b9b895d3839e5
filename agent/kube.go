package agent

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/cluster"
	"github.com/berth-dev/berth/kubeapi"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/stats"
)

// kubeNode is the node object of the Kubernetes API: empty until Run has
// measured the host (machine info needs cAdvisor started).
type kubeNode struct {
	r atomic.Pointer[cluster.NodeReporter]
	// ids are what the kubelet reports of the host beside HostInfo: OS
	// image, machine ID, boot ID (read once; empty where unreadable).
	osImage, machineID, bootID string
}

// set renders the node of host from now on, Ready from the node checks.
func (k *kubeNode) set(a *Agent, host cluster.HostInfo) {
	k.osImage, k.machineID, k.bootID = osImage("/etc/os-release"), readTrimmed("/etc/machine-id"), readTrimmed("/proc/sys/kernel/random/boot_id")
	k.r.Store(cluster.NewNodeReporter(host, nodeChecks(a), a.clock))
}

// object implements kubeapi.Options.NodeObject.
func (k *kubeNode) object(ctx context.Context, pods int) (v1.Node, bool) {
	r := k.r.Load()
	if r == nil {
		return v1.Node{}, false
	}
	n := r.Node(ctx, pods)
	info := &n.Status.NodeInfo
	info.OSImage, info.MachineID, info.BootID = k.osImage, k.machineID, k.bootID
	return n, true
}

// osImage is PRETTY_NAME of an os-release file, as the kubelet reports it.
func osImage(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

func readTrimmed(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// pushName is the push source's name, "" when it is off.
func pushName(p *sources.PushSource) string {
	if p == nil {
		return ""
	}
	return p.Name()
}

// kubeUsage serves metrics.k8s.io from the stats provider's Summary, the
// numbers of /metrics/resource; window is cAdvisor's housekeeping
// interval, over which its CPU rates are computed.
type kubeUsage struct {
	p      stats.Provider
	window time.Duration
}

// Usage implements kubeapi.UsageSource: the node's and each pod's
// containers' CPU rate and working set; a container without both yet
// (its first sample) counts as zero.
func (u kubeUsage) Usage(ctx context.Context) (*kubeapi.Usage, error) {
	sum, err := u.p.Summary(ctx)
	if err != nil {
		return nil, err
	}
	out := &kubeapi.Usage{}
	n := sum.Node
	out.Node.Window = u.window
	if n.CPU != nil && n.CPU.UsageNanoCores != nil {
		out.Node.CPUKnown, out.Node.CPUNanoCores, out.Node.Time = true, *n.CPU.UsageNanoCores, n.CPU.Time.Time
	}
	if n.Memory != nil && n.Memory.WorkingSetBytes != nil {
		out.Node.MemoryKnown, out.Node.MemoryBytes = true, *n.Memory.WorkingSetBytes
		if out.Node.Time.IsZero() {
			out.Node.Time = n.Memory.Time.Time
		}
	}
	for _, p := range sum.Pods {
		pu := kubeapi.PodUsage{Namespace: p.PodRef.Namespace, Name: p.PodRef.Name, UID: p.PodRef.UID, Source: p.Source, Window: u.window}
		for _, c := range p.Containers {
			cu := kubeapi.ContainerUsage{Name: c.Name}
			if c.CPU != nil && c.CPU.UsageNanoCores != nil {
				cu.CPUNanoCores = *c.CPU.UsageNanoCores
				if c.CPU.Time.After(pu.Time) {
					pu.Time = c.CPU.Time.Time
				}
			}
			if c.Memory != nil && c.Memory.WorkingSetBytes != nil {
				cu.MemoryBytes = *c.Memory.WorkingSetBytes
			}
			pu.Containers = append(pu.Containers, cu)
		}
		out.Pods = append(out.Pods, pu)
	}
	return out, nil
}
