package registry

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/berth-dev/berth/kubeapi/printers"

	memdb "github.com/hashicorp/go-memdb"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/berth-dev/berth/model"
)

// nodePoll is how often a watch of the node renders it again: its Ready
// condition comes from checks that notify no one.
const nodePoll = 10 * time.Second

// node renders the one Node: Options.NodeObject's, counting the pods of
// the sources only selects (nil: all), or a Node with only a name and an
// Unknown Ready condition until the agent has built it; its uid is derived
// from its name when the rendering has none.
func (a *kinds) node(ctx context.Context, ws memdb.WatchSet, only sourceFilter) (*v1.Node, error) {
	pods, err := a.o.Store.Pods(ws)
	if err != nil {
		return nil, err
	}
	count := len(pods)
	if only != nil {
		count = 0
		for _, p := range pods {
			if only(p.Source) {
				count++
			}
		}
	}
	var n v1.Node
	ok := false
	if a.o.NodeObject != nil {
		n, ok = a.o.NodeObject(ctx, count)
	}
	if !ok {
		n = v1.Node{ObjectMeta: metav1.ObjectMeta{Name: a.o.Node},
			Status: v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionUnknown,
				Reason: "BerthStarting", Message: "berth has not measured the node yet"}}}}
	}
	n.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}
	if n.Name == "" {
		n.Name = a.o.Node
	}
	if n.UID == "" {
		n.UID = derivedUID("node", n.Name)
	}
	srcs, err := a.o.Store.Sources(ws)
	if err != nil {
		return nil, err
	}
	// The kubelet posts its status every 10 s; a berth that renders the
	// node is posting it now.
	beat := metav1.Time{Time: a.o.Clock.Now().Truncate(nodePoll)}
	n.Status.Conditions = append([]v1.NodeCondition(nil), n.Status.Conditions...)
	for _, src := range srcs {
		if only == nil || only(src.Name) {
			n.Status.Conditions = append(n.Status.Conditions, sourceCondition(src))
		}
	}
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].LastHeartbeatTime.IsZero() {
			n.Status.Conditions[i].LastHeartbeatTime = beat
		}
	}
	return &n, nil
}

// maxConditionRefusals bounds the refusals a source condition's message
// lists; the others are counted.
const maxConditionRefusals = 3

// SourceConditionType is the type of the node condition of the source
// named name: "BerthSource" and the name in title case, then "Ready"
// (BerthSourceFileReady).
func SourceConditionType(name string) v1.NodeConditionType {
	if name == "" {
		return "BerthSourceReady"
	}
	return v1.NodeConditionType("BerthSource" + strings.ToUpper(name[:1]) + name[1:] + "Ready")
}

// sourceCondition is src's state as a node condition: True when synced
// with every manifest admitted, False while it fails to read (the error)
// or refuses manifests (the first few), Unknown until its first read;
// the reason is model.Source.State.
func sourceCondition(src *model.Source) v1.NodeCondition {
	c := v1.NodeCondition{Type: SourceConditionType(src.Name), Reason: src.State(),
		LastTransitionTime: metav1.Time{Time: src.Since.Truncate(time.Second)}}
	switch c.Reason {
	case model.SourceUnreadable:
		c.Status, c.Message = v1.ConditionFalse, "cannot read the source, keeping its last good pods: "+src.LastError
	case model.SourceNotSynced:
		c.Status, c.Message = v1.ConditionUnknown, "the source has not been read yet"
	case model.SourceRefusing:
		c.Status = v1.ConditionFalse
		shown := src.Refusals[:min(len(src.Refusals), maxConditionRefusals)]
		c.Message = fmt.Sprintf("%d manifest(s) refused: %s", len(src.Refusals), strings.Join(shown, "; "))
		if more := len(src.Refusals) - len(shown); more > 0 {
			c.Message += fmt.Sprintf("; and %d more (kubectl get events)", more)
		}
	default:
		c.Status, c.Message = v1.ConditionTrue, "the source is read and every manifest admitted"
	}
	return c
}

// nodesResource serves the node; push-scoped requests get it with the
// push source's pods counted only.
func (a *kinds) nodesResource() *Kind {
	res := a.nodesView(nil)
	res.Push = a.nodesView(a.pushFilter)
	return res
}

// nodesView is the nodes kind counting the pods of the sources only
// selects (nil: all).
func (a *kinds) nodesView(only sourceFilter) *Kind {
	return &Kind{
		Name: "nodes", Singular: "node", Kind: "Node", ShortNames: []string{"no"},
		APIVersion: "v1", ListKind: "NodeList", Poll: nodePoll,
		Zero: func() Object { return &v1.Node{} },
		snapshot: func(ctx context.Context, ws memdb.WatchSet) ([]item, error) {
			n, err := a.node(ctx, ws, only)
			if err != nil {
				return nil, err
			}
			return []item{{Key: n.Name, Obj: n}}, nil
		},
		Fields: func(o runtime.Object) fields.Set {
			return fields.Set{"spec.unschedulable": boolString(o.(*v1.Node).Spec.Unschedulable)}
		},
		Columns: nodeColumns,
		Cells:   nodeCells,
	}
}

var nodeColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
	{Name: "Status", Type: "string", Description: "The status of the node"},
	{Name: "Roles", Type: "string", Description: "The roles of the node"},
	{Name: "Age", Type: "string", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
	{Name: "Version", Type: "string", Description: "Kubelet Version reported by the node."},
	{Name: "Internal-IP", Type: "string", Priority: 1, Description: "List of addresses reachable to the node."},
	{Name: "External-IP", Type: "string", Priority: 1, Description: "List of addresses reachable to the node."},
	{Name: "OS-Image", Type: "string", Priority: 1, Description: "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."},
	{Name: "Kernel-Version", Type: "string", Priority: 1, Description: "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."},
	{Name: "Container-Runtime", Type: "string", Priority: 1, Description: "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2)."},
}

// nodeCells are the cells of kubectl's printNode.
func nodeCells(o runtime.Object, now time.Time) ([]any, []metav1.TableRowCondition) {
	n := o.(*v1.Node)
	var status []string
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			if c.Status == v1.ConditionTrue {
				status = append(status, "Ready")
			} else {
				status = append(status, "NotReady")
			}
		}
	}
	if len(status) == 0 {
		status = []string{"Unknown"}
	}
	if n.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	var roles []string
	for k, v := range n.Labels {
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/"):
			if r := strings.TrimPrefix(k, "node-role.kubernetes.io/"); r != "" {
				roles = append(roles, r)
			}
		case k == "kubernetes.io/role" && v != "":
			roles = append(roles, v)
		}
	}
	sort.Strings(roles)
	role := strings.Join(roles, ",")
	if role == "" {
		role = "<none>"
	}
	orUnknown := func(s string) string {
		if s == "" {
			return "<unknown>"
		}
		return s
	}
	info := n.Status.NodeInfo
	return []any{n.Name, strings.Join(status, ","), role, printers.Age(n.CreationTimestamp, now), info.KubeletVersion,
		nodeAddress(n, v1.NodeInternalIP), nodeAddress(n, v1.NodeExternalIP), orUnknown(info.OSImage), orUnknown(info.KernelVersion),
		orUnknown(info.ContainerRuntimeVersion)}, nil
}

func nodeAddress(n *v1.Node, t v1.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}
