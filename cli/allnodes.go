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
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/berth-dev/berth/cluster"
	"github.com/berth-dev/berth/model"
)

// getAllNodePods is berth get pods --all-nodes: every node's pods from
// etcd, printed here (no berth serves them as a Table); names and -n
// narrow the list.
func getAllNodePods(cmd *cobra.Command, ef *etcdFlags, f getFlags, names []string) error {
	if f.watch {
		return errors.New("--watch does not go with --all-nodes")
	}
	if f.selector != "" {
		return errors.New("-l does not go with --all-nodes")
	}
	if err := checkOutput(f.output); err != nil {
		return err
	}
	list, err := allNodePods(cmd.Context(), ef)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	kept := list.Items[:0]
	for _, p := range list.Items {
		if (f.namespace == "" || f.allNamespaces || p.Namespace == f.namespace) && (len(want) == 0 || want[p.Name]) {
			kept = append(kept, p)
		}
	}
	list.Items = kept
	return printPods(cmd.OutOrStdout(), list, f.output, true, time.Now())
}

// printPods prints list; nodes adds a NODE column (spec.nodeName) first.
func printPods(w io.Writer, list *v1.PodList, output string, nodes bool, now time.Time) error {
	if err := checkOutput(output); err != nil {
		return err
	}
	switch output {
	case "json":
		return printJSON(w, list)
	case "yaml":
		return printYAML(w, list)
	}
	t := &table{w: w}
	withNode := func(node string, row []string) []string {
		if !nodes {
			return row
		}
		return append([]string{node}, row...)
	}
	rows := [][]string{withNode("NODE", podHeader(output == "wide"))}
	for i := range list.Items {
		rows = append(rows, withNode(list.Items[i].Spec.NodeName, podRow(&list.Items[i], output == "wide", now)))
	}
	return t.write(rows...)
}

func podHeader(wide bool) []string {
	h := []string{"NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"}
	if wide {
		h = append(h, "SOURCE", "ORIGIN")
	}
	return h
}

// podRow is the row of p under podHeader(wide). As kubectl, READY and
// RESTARTS count the sidecars beside the app containers; while the pod
// initializes, RESTARTS counts the init containers up to the first one not
// done.
func podRow(p *v1.Pod, wide bool, now time.Time) []string {
	ready, restarts, sidecarRestarts, initializing := 0, int32(0), int32(0), false
	for _, cs := range p.Status.InitContainerStatuses {
		sidecar := isSidecar(p, cs.Name)
		restarts += cs.RestartCount
		if sidecar {
			sidecarRestarts += cs.RestartCount
		}
		if cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0 {
			continue
		}
		if sidecar && cs.Started != nil && *cs.Started {
			if cs.Ready {
				ready++
			}
			continue
		}
		initializing = true // the first init container not done
		break
	}
	if !initializing || initialized(&p.Status) {
		restarts = sidecarRestarts
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Ready {
				ready++
			}
			restarts += cs.RestartCount
		}
	}
	// A pod known only by its status (e.g. from a node's file source,
	// listed from etcd) has no spec: its containers are its statuses.
	total := max(len(p.Spec.Containers), len(p.Status.ContainerStatuses))
	for i := range p.Spec.InitContainers {
		if model.IsSidecar(&p.Spec.InitContainers[i]) {
			total++
		}
	}
	row := []string{p.Namespace, p.Name, fmt.Sprintf("%d/%d", ready, total),
		podStatusReason(p), fmt.Sprint(restarts), ageSince(p.CreationTimestamp, now)}
	if wide {
		row = append(row, p.Annotations["berth.io/source"], p.Annotations["berth.io/origin"])
	}
	return row
}

// table prints rows in columns three spaces apart, as tabwriter would, but

// podStatusReason mirrors kubectl's STATUS column.
func podStatusReason(p *v1.Pod) string {
	reason := string(p.Status.Phase)
	if p.Status.Reason != "" {
		reason = p.Status.Reason
	}
	if p.DeletionTimestamp != nil {
		return "Terminating"
	}
	for i, ics := range p.Status.InitContainerStatuses {
		switch {
		case ics.State.Terminated != nil && ics.State.Terminated.ExitCode == 0:
			continue
		case isSidecar(p, ics.Name) && ics.Started != nil && *ics.Started:
			continue
		case ics.State.Terminated != nil:
			return "Init:" + ics.State.Terminated.Reason
		case ics.State.Waiting != nil && ics.State.Waiting.Reason != "" && ics.State.Waiting.Reason != "PodInitializing":
			return "Init:" + ics.State.Waiting.Reason
		default:
			return fmt.Sprintf("Init:%d/%d", i, len(p.Spec.InitContainers))
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		switch {
		case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
			reason = cs.State.Waiting.Reason
		case cs.State.Terminated != nil && cs.State.Terminated.Reason != "" && p.Status.Phase != v1.PodRunning:
			reason = cs.State.Terminated.Reason
		}
	}
	return reason
}

// isSidecar reports whether p's init container name is a sidecar.
func isSidecar(p *v1.Pod, name string) bool {
	for i := range p.Spec.InitContainers {
		if p.Spec.InitContainers[i].Name == name {
			return model.IsSidecar(&p.Spec.InitContainers[i])
		}
	}
	return false
}

// initialized reports whether s has the Initialized condition True.
func initialized(s *v1.PodStatus) bool {
	for _, c := range s.Conditions {
		if c.Type == v1.PodInitialized {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// ageSince is kubectl's AGE: "<unknown>" for no time (a pod known only by
// its status).
func ageSince(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
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
