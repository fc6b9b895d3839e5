package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func getCmd() *cobra.Command {
	get := &cobra.Command{Use: "get", Short: "Show state from a running berth"}
	var client apiClient
	var output string
	pods := &cobra.Command{
		Use:   "pods",
		Short: "List pods with their status (NAME READY STATUS RESTARTS AGE)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var list v1.PodList
			if err := client.getJSON(cmd.Context(), "/pods", &list); err != nil {
				return err
			}
			return printPods(cmd.OutOrStdout(), &list, output, time.Now())
		},
	}
	client.addFlags(pods.Flags())
	pods.Flags().StringVarP(&output, "output", "o", "", "output format: wide, json or yaml")
	get.AddCommand(pods)
	return get
}

func printPods(w io.Writer, list *v1.PodList, output string, now time.Time) error {
	switch output {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	case "yaml":
		b, err := yaml.Marshal(list)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case "", "wide":
	default:
		return fmt.Errorf("unknown output format %q (want wide, json or yaml)", output)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	header := "NAMESPACE\tNAME\tREADY\tSTATUS\tRESTARTS\tAGE"
	if output == "wide" {
		header += "\tSOURCE\tORIGIN"
	}
	fmt.Fprintln(tw, header)
	for i := range list.Items {
		p := &list.Items[i]
		ready, restarts := 0, int32(0)
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Ready {
				ready++
			}
			restarts += cs.RestartCount
		}
		line := fmt.Sprintf("%s\t%s\t%d/%d\t%s\t%d\t%s", p.Namespace, p.Name, ready, len(p.Spec.Containers),
			podStatusReason(p), restarts, age(now.Sub(p.CreationTimestamp.Time)))
		if output == "wide" {
			line += "\t" + p.Annotations["berth.io/source"] + "\t" + p.Annotations["berth.io/origin"]
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// podStatusReason mirrors kubectl's STATUS column.
func podStatusReason(p *v1.Pod) string {
	reason := string(p.Status.Phase)
	if p.Status.Reason != "" {
		reason = p.Status.Reason
	}
	for i, ics := range p.Status.InitContainerStatuses {
		switch {
		case ics.State.Terminated != nil && ics.State.Terminated.ExitCode == 0:
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
