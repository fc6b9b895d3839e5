package cluster

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
)

// PodsAnnotation on a node object counts the pods the node runs.
const PodsAnnotation = "berth.io/pods"

// HostInfo is what an agent reports of its host; fixed at start.
type HostInfo struct {
	Name    string
	Version string // berth's
	// RuntimeVersion is asked for at each render until it answers, as
	// "docker://<version>".
	RuntimeVersion func(ctx context.Context) (string, error)
	Addresses      []v1.NodeAddress
	CPUMilli       int64
	Memory         int64
	MaxPods        int64
	OS, Arch       string
	Kernel         string
	Started        time.Time
	// Labels are the node's labels; kubernetes.io/hostname, os and arch
	// are always Name, OS and Arch.
	Labels map[string]string
}

// Check is one condition of the node's readiness: Err's text is the
// message and Reason the reason of a NotReady node.
type Check struct {
	Reason string
	Err    func(ctx context.Context) error
}

// NodeReporter renders the node object: capacity and allocatable (equal:
// berth reserves nothing), addresses, versions, the pod count and a Ready
// condition from its checks, whose LastTransitionTime moves only when the
// condition changes, so an unchanged node renders the same bytes.
type NodeReporter struct {
	info   HostInfo
	checks []Check
	clock  clock.PassiveClock

	mu      sync.Mutex
	runtime string
	ready   v1.NodeCondition
}

// NewNodeReporter returns the reporter of info; nil clk is the real clock.
func NewNodeReporter(info HostInfo, checks []Check, clk clock.PassiveClock) *NodeReporter {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &NodeReporter{info: info, checks: checks, clock: clk}
}

// Node implements NodeFunc.
func (r *NodeReporter) Node(ctx context.Context, pods int) v1.Node {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runtime == "" && r.info.RuntimeVersion != nil {
		if v, err := r.info.RuntimeVersion(ctx); err == nil {
			r.runtime = v
		}
	}
	cond := v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "BerthReady", Message: "berth is posting ready status"}
	var msgs []string
	for _, c := range r.checks {
		if err := c.Err(ctx); err != nil {
			if cond.Status == v1.ConditionTrue {
				cond.Status, cond.Reason = v1.ConditionFalse, c.Reason
			}
			msgs = append(msgs, err.Error())
		}
	}
	if len(msgs) > 0 {
		cond.Message = strings.Join(msgs, "; ")
	}
	if r.ready.Status != cond.Status || r.ready.Reason != cond.Reason {
		cond.LastTransitionTime = metav1.Time{Time: r.clock.Now().Truncate(time.Second)}
	} else {
		cond.LastTransitionTime = r.ready.LastTransitionTime
	}
	r.ready = cond
	capacity := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(r.info.CPUMilli, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(r.info.Memory, resource.BinarySI),
		v1.ResourcePods:   *resource.NewQuantity(r.info.MaxPods, resource.DecimalSI),
	}
	return v1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              r.info.Name,
			CreationTimestamp: metav1.Time{Time: r.info.Started.Truncate(time.Second)},
			Annotations:       map[string]string{PodsAnnotation: strconv.Itoa(pods)},
			Labels:            r.labels(),
		},
		Status: v1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Conditions:  []v1.NodeCondition{cond},
			Addresses:   r.info.Addresses,
			NodeInfo: v1.NodeSystemInfo{
				KubeletVersion:          "berth/" + r.info.Version,
				ContainerRuntimeVersion: r.runtime,
				OperatingSystem:         r.info.OS,
				Architecture:            r.info.Arch,
				KernelVersion:           r.info.Kernel,
			},
		},
	}
}

func (r *NodeReporter) labels() map[string]string {
	out := maps.Clone(r.info.Labels)
	if out == nil {
		out = map[string]string{}
	}
	out[v1.LabelHostname], out[v1.LabelOSStable], out[v1.LabelArchStable] = r.info.Name, r.info.OS, r.info.Arch
	return out
}
