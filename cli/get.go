package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/berth-dev/berth/cluster"
	"github.com/berth-dev/berth/model"
)

func getCmd() *cobra.Command {
	get := &cobra.Command{Use: "get", Short: "Show state from a running berth"}
	var client apiClient
	var ef etcdFlags
	var f getFlags
	pods := &cobra.Command{
		Use:   "pods",
		Short: "List pods with their status (NAMESPACE NAME READY STATUS RESTARTS AGE); -w follows changes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(f.output); err != nil {
				return err
			}
			if f.allNodes {
				if f.watch {
					return errors.New("--watch does not go with --all-nodes")
				}
				list, err := allNodePods(cmd.Context(), &ef)
				if err != nil {
					return err
				}
				return printPods(cmd.OutOrStdout(), list, f.output, true, time.Now())
			}
			if f.watch {
				ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				return watchPods(ctx, &client, cmd.OutOrStdout(), f, time.Now)
			}
			var list v1.PodList
			if err := client.getJSON(cmd.Context(), "/pods", &list); err != nil {
				return err
			}
			return printPods(cmd.OutOrStdout(), &list, f.output, false, time.Now())
		},
	}
	client.addFlags(pods.Flags())
	pods.Flags().StringVarP(&f.output, "output", "o", "", "output format: wide, json or yaml")
	pods.Flags().BoolVarP(&f.watch, "watch", "w", false, "after the list, print a row for every change until interrupted")
	pods.Flags().BoolVar(&f.watchEvents, "output-watch-events", false, "with --watch, show the event type (ADDED, MODIFIED, DELETED) of each row")
	pods.Flags().BoolVar(&f.allNodes, "all-nodes", false, "list every node's pods from etcd (adds a NODE column) instead of asking one berth")
	ef.addFlags(pods.Flags())
	get.AddCommand(pods, getNodesCmd(), getClaimsCmd())
	return get
}

// getFlags are the flags of berth get pods.
type getFlags struct {
	output      string
	watch       bool
	watchEvents bool
	allNodes    bool
}

func checkOutput(output string) error {
	switch output {
	case "", "wide", "json", "yaml":
		return nil
	}
	return fmt.Errorf("unknown output format %q (want wide, json or yaml)", output)
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

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printYAML(w io.Writer, v any) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
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
		podStatusReason(p), fmt.Sprint(restarts), age(now.Sub(p.CreationTimestamp.Time))}
	if wide {
		row = append(row, p.Annotations["berth.io/source"], p.Annotations["berth.io/origin"])
	}
	return row
}

// table prints rows in columns three spaces apart, as tabwriter would, but
// keeps its column widths across writes (only ever widening them), so that
// rows printed later by a watch line up under the first table.
type table struct {
	w      io.Writer
	widths []int
}

func (t *table) write(rows ...[]string) error {
	for _, r := range rows {
		for i, c := range r {
			if i == len(t.widths) {
				t.widths = append(t.widths, 0)
			}
			t.widths[i] = max(t.widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", t.widths[i]-utf8.RuneCountInString(c)+3))
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}

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

func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
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
