package stats

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	cadvisorv1 "github.com/google/cadvisor/info/v1"
	cadvisorv2 "github.com/google/cadvisor/info/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/model"
	berthrt "github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

// defaultInterface is the interface reported inline in NetworkStats when it
// exists, as the kubelet does.
const defaultInterface = "eth0"

// maxMemoryLimit: larger cgroup memory limits mean "unlimited" (cgroup v1
// reports 2^63 rounded down to a page).
const maxMemoryLimit = uint64(1 << 62)

// summaryInput is everything buildSummary needs, gathered from cAdvisor.
type summaryInput struct {
	NodeName string
	// Infos are cAdvisor's v2 infos keyed by cgroup name ("/" is the root,
	// "/docker/<id>" a Docker container), with the latest stats last.
	Infos map[string]cadvisorv2.ContainerInfo
	// MemoryCapacity of the machine in bytes (0: unknown).
	MemoryCapacity uint64
	// RootFs is the filesystem of root_dir; nil when unknown.
	RootFs *cadvisorv2.FsInfo
	// Store, when set, fills in what a container's labels lack (pod UID).
	Store *store.Store
}

type podAcc struct {
	key, uid  string // the pod's namespace/name and UID label
	ref       PodReference
	source    string
	start     time.Time
	sandbox   *cadvisorv2.ContainerInfo
	sandboxAt time.Time
	// containers by name; the newest instance wins.
	containers map[string]*cadvisorv2.ContainerInfo
	// all running containers (sandbox included), for the totals.
	all []*cadvisorv2.ContainerInfo
}

// buildSummary turns cAdvisor infos into the kubelet-style summary. Only
// containers labelled io.berth.managed=true (and, when NodeName is set,
// io.berth.node=NodeName or no node label) count as pods, each pod being
// the containers of one pod key, UID and source (the kubelet keys pods by
// UID): a removed pod still stopping and the pod that took its name are
// two.
func buildSummary(in summaryInput) *Summary {
	out := &Summary{Node: NodeStats{NodeName: in.NodeName}, Pods: []PodStats{}}
	if root, ok := in.Infos["/"]; ok {
		out.Node.StartTime = metav1.NewTime(root.Spec.CreationTime)
		if s := latest(root); s != nil {
			out.Node.CPU = cpuStats(s)
			out.Node.Memory = memoryStats(s, in.MemoryCapacity)
			out.Node.Network = networkStats(s)
		}
	}
	if in.RootFs != nil {
		out.Node.Fs = fsInfoStats(in.RootFs)
	}

	pods := map[string]*podAcc{}
	names := make([]string, 0, len(in.Infos))
	for name := range in.Infos {
		names = append(names, name)
	}
	sort.Strings(names) // deterministic tie-breaks
	for _, name := range names {
		ci := in.Infos[name]
		l := ci.Spec.Labels
		if name == "/" || l == nil || l[berthrt.LabelManaged] != "true" {
			continue
		}
		if n := l[berthrt.LabelNode]; in.NodeName != "" && n != "" && n != in.NodeName {
			continue
		}
		ns, pod, ctr := l[berthrt.LabelPodNamespace], l[berthrt.LabelPodName], l[berthrt.LabelContainerName]
		if pod == "" || ctr == "" {
			continue
		}
		if ns == "" {
			ns = "default"
		}
		key, uid, source := ns+"/"+pod, l[berthrt.LabelPodUID], l[berthrt.LabelSource]
		id := key + "\x00" + uid + "\x00" + source
		acc := pods[id]
		if acc == nil {
			acc = &podAcc{key: key, uid: uid, ref: PodReference{Name: pod, Namespace: ns, UID: uid}, source: source,
				containers: map[string]*cadvisorv2.ContainerInfo{}}
			pods[id] = acc
		}
		created := ci.Spec.CreationTime
		acc.all = append(acc.all, &ci)
		if acc.start.IsZero() || (!created.IsZero() && created.Before(acc.start)) {
			acc.start = created
		}
		if ctr == model.SandboxName {
			if acc.sandbox == nil || created.After(acc.sandboxAt) {
				acc.sandbox, acc.sandboxAt = &ci, created
			}
			continue
		}
		if old := acc.containers[ctr]; old == nil || created.After(old.Spec.CreationTime) {
			acc.containers[ctr] = &ci
		}
	}

	// By key, a key's newest pod first (where the kubelet's series,
	// named by key, keep one pod: the one that took the name).
	ids := slices.SortedFunc(maps.Keys(pods), func(a, b string) int {
		pa, pb := pods[a], pods[b]
		if c := strings.Compare(pa.key, pb.key); c != 0 {
			return c
		}
		if c := pb.start.Compare(pa.start); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, id := range ids {
		acc := pods[id]
		if acc.ref.UID == "" && in.Store != nil {
			if p, err := in.Store.Pod(nil, acc.key); err == nil && p != nil && p.Spec != nil {
				acc.ref.UID = string(p.Spec.UID)
			}
		}
		ps := PodStats{PodRef: acc.ref, Source: acc.source, StartTime: metav1.NewTime(acc.start), Containers: []ContainerStats{}}
		if acc.sandbox != nil {
			ps.StartTime = metav1.NewTime(acc.sandbox.Spec.CreationTime)
			if s := latest(*acc.sandbox); s != nil {
				ps.Network = networkStats(s)
			}
		}
		cnames := make([]string, 0, len(acc.containers))
		for n := range acc.containers {
			cnames = append(cnames, n)
		}
		sort.Strings(cnames)
		for _, n := range cnames {
			ci := acc.containers[n]
			cs := ContainerStats{Name: n, StartTime: metav1.NewTime(ci.Spec.CreationTime)}
			if s := latest(*ci); s != nil {
				cs.CPU = cpuStats(s)
				cs.Memory = memoryStats(s, memoryLimit(ci.Spec))
				cs.Rootfs = rootfsStats(s)
			}
			ps.Containers = append(ps.Containers, cs)
		}
		ps.CPU, ps.Memory = podTotals(acc.all)
		out.Pods = append(out.Pods, ps)
	}
	return out
}

// latest returns the newest sample of ci, or nil.
func latest(ci cadvisorv2.ContainerInfo) *cadvisorv2.ContainerStats {
	var best *cadvisorv2.ContainerStats
	for _, s := range ci.Stats {
		if s != nil && (best == nil || s.Timestamp.After(best.Timestamp)) {
			best = s
		}
	}
	return best
}

func u64(v uint64) *uint64 { return &v }

func cpuStats(s *cadvisorv2.ContainerStats) *CPUStats {
	if s.Cpu == nil {
		return nil
	}
	c := &CPUStats{Time: metav1.NewTime(s.Timestamp), UsageCoreNanoSeconds: u64(s.Cpu.Usage.Total)}
	if s.CpuInst != nil {
		c.UsageNanoCores = u64(s.CpuInst.Usage.Total)
	}
	return c
}

// memoryLimit is the container's memory limit, or 0 when unlimited.
func memoryLimit(spec cadvisorv2.ContainerSpec) uint64 {
	if !spec.HasMemory || spec.Memory.Limit == 0 || spec.Memory.Limit > maxMemoryLimit {
		return 0
	}
	return spec.Memory.Limit
}

func memoryStats(s *cadvisorv2.ContainerStats, limit uint64) *MemoryStats {
	if s.Memory == nil {
		return nil
	}
	m := s.Memory
	out := &MemoryStats{
		Time:            metav1.NewTime(s.Timestamp),
		UsageBytes:      u64(m.Usage),
		WorkingSetBytes: u64(m.WorkingSet),
		RSSBytes:        u64(m.RSS),
		PageFaults:      u64(m.ContainerData.Pgfault),
		MajorPageFaults: u64(m.ContainerData.Pgmajfault),
	}
	if limit > 0 {
		avail := uint64(0)
		if limit > m.WorkingSet {
			avail = limit - m.WorkingSet
		}
		out.AvailableBytes = u64(avail)
	}
	return out
}

func ifaceStats(i cadvisorv1.InterfaceStats) InterfaceStats {
	return InterfaceStats{Name: i.Name, RxBytes: u64(i.RxBytes), RxErrors: u64(i.RxErrors), TxBytes: u64(i.TxBytes), TxErrors: u64(i.TxErrors)}
}

func networkStats(s *cadvisorv2.ContainerStats) *NetworkStats {
	if s.Network == nil || len(s.Network.Interfaces) == 0 {
		return nil
	}
	out := &NetworkStats{Time: metav1.NewTime(s.Timestamp)}
	var def *cadvisorv1.InterfaceStats
	for i := range s.Network.Interfaces {
		it := &s.Network.Interfaces[i]
		out.Interfaces = append(out.Interfaces, ifaceStats(*it))
		if it.Name == "lo" || (def != nil && def.Name == defaultInterface) {
			continue
		}
		if it.Name == defaultInterface || def == nil || it.RxBytes+it.TxBytes > def.RxBytes+def.TxBytes {
			def = it
		}
	}
	sort.Slice(out.Interfaces, func(i, j int) bool { return out.Interfaces[i].Name < out.Interfaces[j].Name })
	if def != nil {
		out.InterfaceStats = ifaceStats(*def)
	}
	return out
}

func rootfsStats(s *cadvisorv2.ContainerStats) *FsStats {
	if s.Filesystem == nil || s.Filesystem.BaseUsageBytes == nil {
		return nil
	}
	out := &FsStats{Time: metav1.NewTime(s.Timestamp), UsedBytes: u64(*s.Filesystem.BaseUsageBytes)}
	if s.Filesystem.InodeUsage != nil {
		out.InodesUsed = u64(*s.Filesystem.InodeUsage)
	}
	return out
}

func fsInfoStats(f *cadvisorv2.FsInfo) *FsStats {
	out := &FsStats{
		Time:           metav1.NewTime(f.Timestamp),
		CapacityBytes:  u64(f.Capacity),
		AvailableBytes: u64(f.Available),
		UsedBytes:      u64(f.Usage),
	}
	if out.Time.IsZero() {
		out.Time = metav1.Now()
	}
	if f.Inodes != nil {
		out.Inodes = u64(*f.Inodes)
		if f.InodesFree != nil {
			out.InodesFree = u64(*f.InodesFree)
			if *f.Inodes >= *f.InodesFree {
				out.InodesUsed = u64(*f.Inodes - *f.InodesFree)
			}
		}
	}
	return out
}

// podTotals sums the latest CPU and memory of every running container of a
// pod (the kubelet reads the pod cgroup; berth's containers have none).
func podTotals(all []*cadvisorv2.ContainerInfo) (*CPUStats, *MemoryStats) {
	var cpu *CPUStats
	var mem *MemoryStats
	var newest time.Time
	nanoCoresKnown := true
	for _, ci := range all {
		s := latest(*ci)
		if s == nil {
			continue
		}
		if s.Timestamp.After(newest) {
			newest = s.Timestamp
		}
		if s.Cpu != nil {
			if cpu == nil {
				cpu = &CPUStats{UsageCoreNanoSeconds: u64(0), UsageNanoCores: u64(0)}
			}
			*cpu.UsageCoreNanoSeconds += s.Cpu.Usage.Total
			if s.CpuInst != nil {
				*cpu.UsageNanoCores += s.CpuInst.Usage.Total
			} else {
				nanoCoresKnown = false
			}
		}
		if s.Memory != nil {
			if mem == nil {
				mem = &MemoryStats{UsageBytes: u64(0), WorkingSetBytes: u64(0), RSSBytes: u64(0), PageFaults: u64(0), MajorPageFaults: u64(0)}
			}
			*mem.UsageBytes += s.Memory.Usage
			*mem.WorkingSetBytes += s.Memory.WorkingSet
			*mem.RSSBytes += s.Memory.RSS
			*mem.PageFaults += s.Memory.ContainerData.Pgfault
			*mem.MajorPageFaults += s.Memory.ContainerData.Pgmajfault
		}
	}
	if cpu != nil {
		cpu.Time = metav1.NewTime(newest)
		if !nanoCoresKnown {
			cpu.UsageNanoCores = nil
		}
	}
	if mem != nil {
		mem.Time = metav1.NewTime(newest)
	}
	return cpu, mem
}
