package cli

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/berth-dev/berth/cluster"
)

func getNodesCmd() *cobra.Command {
	var ef etcdFlags
	var output string
	cmd := &cobra.Command{
		Use:   "nodes",
		Short: "List the nodes registered in etcd (NAME STATUS PODS VERSION AGE)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			var nodes []v1.Node
			if err := ef.do(cmd.Context(), func(ctx context.Context, reg cluster.Registry) (err error) {
				nodes, err = reg.Nodes(ctx)
				return err
			}); err != nil {
				return err
			}
			return printNodes(cmd.OutOrStdout(), cmd.ErrOrStderr(), nodes, output, time.Now())
		},
	}
	ef.addFlags(cmd.Flags())
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: wide, json or yaml")
	return cmd
}

// nodeColumns are get nodes' columns, the last three -o wide's.
var nodeColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name"}, {Name: "Status", Type: "string"}, {Name: "Pods", Type: "string"},
	{Name: "Version", Type: "string"}, {Name: "Age", Type: "string"},
	{Name: "Internal-IP", Type: "string", Priority: 1}, {Name: "Kernel-Version", Type: "string", Priority: 1},
	{Name: "Container-Runtime", Type: "string", Priority: 1},
}

func printNodes(w, stderr io.Writer, nodes []v1.Node, output string, now time.Time) error {
	list := &v1.NodeList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "NodeList"}, Items: nodes}
	if output == "json" || output == "yaml" {
		p, err := resourcePrinter(outputFormat{kind: output})
		if err != nil {
			return err
		}
		return p.PrintObj(list, w)
	}
	t := &metav1.Table{ColumnDefinitions: nodeColumns}
	for i := range nodes {
		n := &nodes[i]
		ip := "<none>"
		for _, a := range n.Status.Addresses {
			if a.Type == v1.NodeInternalIP {
				ip = a.Address
			}
		}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: []any{n.Name, nodeStatus(n), n.Annotations[cluster.PodsAnnotation],
			n.Status.NodeInfo.KubeletVersion, nodeAge(n.CreationTimestamp, now),
			ip, n.Status.NodeInfo.KernelVersion, n.Status.NodeInfo.ContainerRuntimeVersion}})
	}
	return printTable(w, stderr, t, output == "wide")
}

// nodeStatus mirrors kubectl's STATUS column of nodes.
func nodeStatus(n *v1.Node) string {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			if c.Status == v1.ConditionTrue {
				return "Ready"
			}
			return "NotReady"
		}
	}
	return "Unknown"
}

// nodeAge is kubectl's AGE: "<unknown>" for a node key without a creation
// time (written by something other than berth).
func nodeAge(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}
