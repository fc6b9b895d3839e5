package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/cluster"
	"github.com/berth-dev/berth/kubeapi/printers"
)

// getAllNodePods is berth get pods --all-nodes: every node's pods from
// etcd, printed as berth get pods prints a berth's (the API's pod Table,
// printers.PodTable) with the NODE column first; names and -n narrow the
// list as they narrow get pods.
func getAllNodePods(cmd *cobra.Command, ef *etcdFlags, f getFlags, names []string) error {
	if f.watch {
		return errors.New("--watch does not go with --all-nodes")
	}
	if f.selector != "" {
		return errors.New("-l does not go with --all-nodes")
	}
	out, err := parseOutput(f.output)
	if err != nil {
		return err
	}
	list, err := allNodePods(cmd.Context(), ef)
	if err != nil {
		return err
	}
	q := f.query(names)
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	kept := list.Items[:0]
	for _, p := range list.Items {
		if (q.namespace == "" || p.Namespace == q.namespace) && (len(want) == 0 || want[p.Name]) {
			kept = append(kept, p)
		}
	}
	list.Items = kept
	return printAllNodePods(cmd.OutOrStdout(), cmd.ErrOrStderr(), list, out, q, time.Now())
}

// printAllNodePods prints list as out asks: a table with the NODE column
// first, ages at now, or the objects.
func printAllNodePods(stdout, stderr io.Writer, list *v1.PodList, out outputFormat, q getQuery, now time.Time) error {
	if !out.table() {
		po, err := newObjectPrinter(stdout, out, false)
		if err != nil {
			return err
		}
		return po.print(list)
	}
	if len(list.Items) == 0 {
		if q.allNS {
			fmt.Fprintln(stderr, "No resources found")
		} else {
			fmt.Fprintf(stderr, "No resources found in %s namespace.\n", q.namespace)
		}
		return nil
	}
	t, err := printers.PodTable(withStatusContainers(list.Items), now)
	if err != nil {
		return err
	}
	return newTablePrinter(stdout, out.kind == "wide", q.allNS, false, true).print(t, "")
}

// withStatusContainers gives a pod known only by its status (a node's
// file pod, listed from etcd) the containers its statuses name, so READY
// counts them as kubectl would count the spec's.
func withStatusContainers(pods []v1.Pod) []v1.Pod {
	for i := range pods {
		p := &pods[i]
		if len(p.Spec.Containers) == 0 {
			for _, cs := range p.Status.ContainerStatuses {
				p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: cs.Name, Image: cs.Image})
			}
		}
	}
	return pods
}

// allNodePods lists every node's pods from etcd (get pods --all-nodes).
func allNodePods(ctx context.Context, ef *etcdFlags) (*v1.PodList, error) {
	var pods []v1.Pod
	if err := ef.do(ctx, func(ctx context.Context, reg cluster.Registry) (err error) {
		pods, err = reg.Pods(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	return &v1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Items: pods}, nil
}
