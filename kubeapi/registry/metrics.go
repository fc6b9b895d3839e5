package registry

import (
	"context"
	"fmt"
	"time"

	"github.com/berth-dev/berth/kubeapi/printers"

	memdb "github.com/hashicorp/go-memdb"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/berth-dev/berth/model"
)

// metricsPoll is how often a watch of metrics samples again (metrics-server
// serves no watch; kubectl never asks for one).
const metricsPoll = 15 * time.Second

// PodMetrics is metrics.k8s.io/v1beta1 PodMetrics (k8s.io/metrics), by
// its JSON: the pod's labels, so that label selectors work as with
// metrics-server.
type PodMetrics struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Timestamp         metav1.Time        `json:"timestamp"`
	Window            metav1.Duration    `json:"window"`
	Containers        []ContainerMetrics `json:"containers"`
}

// ContainerMetrics is one container's usage: cpu and memory.
type ContainerMetrics struct {
	Name  string          `json:"name"`
	Usage v1.ResourceList `json:"usage"`
}

// NodeMetrics is metrics.k8s.io/v1beta1 NodeMetrics.
type NodeMetrics struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Timestamp         metav1.Time     `json:"timestamp"`
	Window            metav1.Duration `json:"window"`
	Usage             v1.ResourceList `json:"usage"`
}

// PodMetricsList and NodeMetricsList are the lists, by their JSON.
type (
	PodMetricsList struct {
		metav1.TypeMeta `json:",inline"`
		metav1.ListMeta `json:"metadata,omitempty"`
		Items           []PodMetrics `json:"items"`
	}
	NodeMetricsList struct {
		metav1.TypeMeta `json:",inline"`
		metav1.ListMeta `json:"metadata,omitempty"`
		Items           []NodeMetrics `json:"items"`
	}
)

// DeepCopyObject implements runtime.Object.
func (m *PodMetrics) DeepCopyObject() runtime.Object {
	out := *m
	m.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Containers = make([]ContainerMetrics, len(m.Containers))
	for i, c := range m.Containers {
		out.Containers[i] = ContainerMetrics{Name: c.Name, Usage: c.Usage.DeepCopy()}
	}
	return &out
}

// DeepCopyObject implements runtime.Object.
func (m *NodeMetrics) DeepCopyObject() runtime.Object {
	out := *m
	m.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Usage = m.Usage.DeepCopy()
	return &out
}

func cpuQuantity(nanoCores uint64) apiresource.Quantity {
	return *apiresource.NewScaledQuantity(int64(nanoCores), apiresource.Nano)
}

func memoryQuantity(bytes uint64) apiresource.Quantity {
	return *apiresource.NewQuantity(int64(bytes), apiresource.BinarySI)
}

// usage samples Options.Usage: no source or a failed sample is 503
// ServiceUnavailable, as an apiserver answers for an unavailable
// aggregated API.
func (a *kinds) usage(ctx context.Context) (*Usage, error) {
	if a.o.Usage == nil {
		return nil, apierrors.NewServiceUnavailable("metrics are not available: container stats are not configured")
	}
	u, err := a.o.Usage.Usage(ctx)
	if err != nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("metrics are not available: %v", err))
	}
	if u == nil {
		return nil, apierrors.NewServiceUnavailable("metrics are not available")
	}
	return u, nil
}

func (a *kinds) podMetricsResource() *Kind {
	return &Kind{
		Name: "pods", Singular: "", Kind: "PodMetrics", Namespaced: true,
		APIVersion: MetricsGroupVersion, ListKind: "PodMetricsList", Poll: metricsPoll,
		Zero: func() Object { return &PodMetrics{} },
		snapshot: func(ctx context.Context, ws memdb.WatchSet) ([]item, error) {
			u, err := a.usage(ctx)
			if err != nil {
				return nil, err
			}
			pods, err := a.o.Store.Pods(nil)
			if err != nil {
				return nil, err
			}
			byKey := make(map[string]*model.Pod, len(pods))
			for _, p := range pods {
				byKey[p.Key] = p
			}
			var out []item
			for _, pu := range u.Pods {
				p := byKey[pu.Namespace+"/"+pu.Name]
				if p == nil || p.Spec == nil || string(p.Spec.UID) != pu.UID || p.Source != pu.Source {
					continue // another pod's containers under this key
				}
				m := &PodMetrics{TypeMeta: metav1.TypeMeta{APIVersion: MetricsGroupVersion, Kind: "PodMetrics"},
					ObjectMeta: metav1.ObjectMeta{Name: pu.Name, Namespace: pu.Namespace, Labels: p.Spec.Labels,
						CreationTimestamp: metav1.Time{Time: a.o.Clock.Now().Truncate(time.Second)}},
					Timestamp: metav1.Time{Time: pu.Time}, Window: metav1.Duration{Duration: pu.Window}, Containers: []ContainerMetrics{}}
				for _, c := range pu.Containers {
					m.Containers = append(m.Containers, ContainerMetrics{Name: c.Name, Usage: v1.ResourceList{
						v1.ResourceCPU: cpuQuantity(c.CPUNanoCores), v1.ResourceMemory: memoryQuantity(c.MemoryBytes)}})
				}
				out = append(out, item{Key: p.Key, Obj: m, Source: p.Source})
			}
			return out, nil
		},
		Columns: []metav1.TableColumnDefinition{printers.NameColumn,
			{Name: "CPU", Type: "string", Description: "The CPU usage of the pod's containers."},
			{Name: "Memory", Type: "string", Description: "The memory working set of the pod's containers."},
			{Name: "Window", Type: "string", Description: "The window over which the usage was measured."}},
		Cells: func(o runtime.Object, now time.Time) ([]any, []metav1.TableRowCondition) {
			m := o.(*PodMetrics)
			var cpu, mem apiresource.Quantity
			for _, c := range m.Containers {
				cpu.Add(c.Usage[v1.ResourceCPU])
				mem.Add(c.Usage[v1.ResourceMemory])
			}
			return []any{m.Name, fmt.Sprintf("%dm", cpu.MilliValue()), fmt.Sprintf("%dMi", mem.Value()/(1<<20)),
				duration.HumanDuration(m.Window.Duration)}, nil
		},
	}
}

func (a *kinds) nodeMetricsResource() *Kind {
	return &Kind{
		Name: "nodes", Kind: "NodeMetrics",
		APIVersion: MetricsGroupVersion, ListKind: "NodeMetricsList", Poll: metricsPoll,
		Zero: func() Object { return &NodeMetrics{} },
		snapshot: func(ctx context.Context, ws memdb.WatchSet) ([]item, error) {
			u, err := a.usage(ctx)
			if err != nil {
				return nil, err
			}
			n := u.Node
			if !n.CPUKnown || !n.MemoryKnown {
				return nil, apierrors.NewServiceUnavailable("metrics are not available: the node's usage is not measured yet")
			}
			node, err := a.node(ctx, nil, nil) // for its labels only
			if err != nil {
				return nil, err
			}
			m := &NodeMetrics{TypeMeta: metav1.TypeMeta{APIVersion: MetricsGroupVersion, Kind: "NodeMetrics"},
				ObjectMeta: metav1.ObjectMeta{Name: a.o.Node, Labels: node.Labels, CreationTimestamp: metav1.Time{Time: a.o.Clock.Now().Truncate(time.Second)}},
				Timestamp:  metav1.Time{Time: n.Time}, Window: metav1.Duration{Duration: n.Window},
				Usage: v1.ResourceList{v1.ResourceCPU: cpuQuantity(n.CPUNanoCores), v1.ResourceMemory: memoryQuantity(n.MemoryBytes)}}
			return []item{{Key: a.o.Node, Obj: m}}, nil
		},
		Columns: []metav1.TableColumnDefinition{printers.NameColumn,
			{Name: "CPU", Type: "string", Description: "The node's CPU usage."},
			{Name: "Memory", Type: "string", Description: "The node's memory working set."},
			{Name: "Window", Type: "string", Description: "The window over which the usage was measured."}},
		Cells: func(o runtime.Object, now time.Time) ([]any, []metav1.TableRowCondition) {
			m := o.(*NodeMetrics)
			return []any{m.Name, fmt.Sprintf("%dm", m.Usage.Cpu().MilliValue()), fmt.Sprintf("%dMi", m.Usage.Memory().Value()/(1<<20)),
				duration.HumanDuration(m.Window.Duration)}, nil
		},
	}
}
