package admission

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/resourcehelper"
	"github.com/berth-dev/berth/store"
)

// Node is what admission knows of the node: the name, labels and OS that
// pods select, and the allocatable CPU (millicores) and memory (bytes)
// their requests are counted against; a zero capacity is unknown and not
// checked. Update.Node nil checks nothing of the node.
type Node struct {
	Name     string
	Labels   map[string]string
	OS       string
	CPUMilli int64
	Memory   int64
}

// The kubelet's admission reasons (pkg/kubelet/lifecycle) and messages.
const (
	reasonOSLabel      = "PodOSSelectorNodeLabelDoesNotMatch"
	reasonOS           = "PodOSNotSupported"
	reasonNodeAffinity = "NodeAffinity"
	reasonOutOf        = "OutOf" // + the resource: OutOfcpu, OutOfmemory
	msgOSLabel         = "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"
	msgOS              = "Failed to admit pod as the OS field doesn't match node OS"
	msgNodeAffinity    = "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
)

// nodeFit decides whether pods fit the node, in the kubelet's order (OS
// label, OS field, resources, node affinity) with its first failure's
// reason. The pods the node runs hold their requests: the store's sum
// (base), less the stored pods a decision replaces, plus the pods it
// holds by key (held, summed in sum).
type nodeFit struct {
	node *Node
	base resourcehelper.Requests
	held map[string]resourcehelper.Requests
	sum  resourcehelper.Requests
}

func newNodeFit(v View, n *Node) *nodeFit {
	f := &nodeFit{node: n, held: map[string]resourcehelper.Requests{}}
	if n != nil {
		f.base = v.Requests()
	}
	return f
}

func minus(r, o resourcehelper.Requests) resourcehelper.Requests {
	return resourcehelper.Requests{CPUMilli: r.CPUMilli - o.CPUMilli, Memory: r.Memory - o.Memory}
}

// unhold takes the stored pod p, which the decision replaces or removes,
// out of the store's sum.
func (f *nodeFit) unhold(p *model.Pod) {
	if f.node != nil {
		f.base = minus(f.base, store.Counted(p))
	}
}

// hold counts p's requests against the node, replacing what p's key held.
// A terminal pod, which runs nothing, holds none.
func (f *nodeFit) hold(p *model.Pod) {
	if f.node == nil || p == nil || p.Terminal != "" {
		return
	}
	f.set(p.Key, store.Counted(p))
}

func (f *nodeFit) set(k string, r resourcehelper.Requests) {
	f.sum = minus(f.sum, f.held[k]).Plus(r)
	f.held[k] = r
}

// admit returns "" and holds pod's requests under key k when it fits
// beside the other pods held, else the refusal "Reason: message". A pod
// unchanged since it was admitted is not checked again, as the kubelet
// admits a pod once.
func (f *nodeFit) admit(k string, pod *v1.Pod, unchanged bool) string {
	if f.node == nil || unchanged {
		return ""
	}
	want := resourcehelper.PodRequests(&pod.Spec)
	if msg := f.refusal(k, pod, want); msg != "" {
		return msg
	}
	f.set(k, want)
	return ""
}

func (f *nodeFit) refusal(k string, pod *v1.Pod, want resourcehelper.Requests) string {
	n := f.node
	if os, ok := pod.Labels[v1.LabelOSStable]; ok && os != n.OS {
		return reasonOSLabel + ": " + msgOSLabel
	}
	if pod.Spec.OS != nil && string(pod.Spec.OS.Name) != n.OS {
		return reasonOS + ": " + msgOS
	}
	used := minus(f.base.Plus(f.sum), f.held[k])
	for _, r := range []struct {
		name                      v1.ResourceName
		requested, used, capacity int64
	}{
		{v1.ResourceCPU, want.CPUMilli, used.CPUMilli, n.CPUMilli},
		{v1.ResourceMemory, want.Memory, used.Memory, n.Memory},
	} {
		if r.capacity > 0 && r.requested > 0 && r.requested > r.capacity-r.used {
			return fmt.Sprintf("%s%s: Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
				reasonOutOf, r.name, r.name, r.requested, r.used, r.capacity)
		}
	}
	if !selectsNode(&pod.Spec, n.Name, n.Labels) {
		return reasonNodeAffinity + ": " + msgNodeAffinity
	}
	return ""
}

// warnings are the lines of pods that name another node in
// spec.nodeName: the pod runs here all the same, as a static pod would.
func (n *Node) warnings(pods []manifest.Desired) []string {
	if n == nil {
		return nil
	}
	var out []string
	for _, d := range pods {
		if nn := d.Pod.Spec.NodeName; nn != "" && nn != n.Name {
			e := manifest.ManifestError{Origin: d.Origin, PodKey: key(d), Field: "spec.nodeName",
				Err: fmt.Sprintf("%q is not this node (%q); berth runs the pod here all the same", nn, n.Name)}
			out = append(out, e.Error())
		}
	}
	return out
}
