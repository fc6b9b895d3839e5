package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/berth-dev/berth/describe"
)

func describeCmd() *cobra.Command {
	var c apiClient
	var ns string
	cmd := &cobra.Command{
		Use:   "describe [pod] POD | pod/POD [-n NAMESPACE]",
		Short: "Show a pod in detail, with its containers and recent events, as kubectl describe does",
		Args: func(cmd *cobra.Command, args []string) error {
			if _, err := describeTarget(args); err != nil {
				return err
			}
			return nil
		},
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			switch {
			case len(args) == 0:
				names := podNames(cmd, toComplete)
				if strings.HasPrefix("pod", toComplete) {
					names = append([]string{"pod"}, names...)
				}
				return names, cobra.ShellCompDirectiveNoFileComp
			case len(args) == 1 && isPodKind(args[0]):
				return podNames(cmd, toComplete), cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name, _ := describeTarget(args)
			ctx := cmd.Context()
			cs, _, err := c.kube()
			if err != nil {
				return err
			}
			p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return c.kubeError(ctx, err)
			}
			// As kubectl describe: the events whose involvedObject is the pod.
			sel := fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": name, "involvedObject.namespace": ns}
			if p.UID != "" {
				sel["involvedObject.uid"] = string(p.UID)
			}
			evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel.AsSelector().String()})
			if err != nil {
				return c.kubeError(ctx, err)
			}
			return describe.Pod(cmd.OutOrStdout(), p, evs.Items, time.Now())
		},
	}
	c.addFlags(cmd.Flags())
	cmd.Flags().StringVarP(&ns, "namespace", "n", "default", "namespace of the pod")
	return cmd
}

func isPodKind(s string) bool { return s == "pod" || s == "pods" || s == "po" }

// describeTarget is the pod named by describe's arguments: POD or pod POD.
func describeTarget(args []string) (string, error) {
	switch {
	case len(args) == 1 && !isPodKind(args[0]):
		return podArg(args[0])
	case len(args) == 2 && isPodKind(args[0]):
		return args[1], nil
	case len(args) == 2:
		return "", fmt.Errorf("describe: berth describes pods only, not %q", args[0])
	}
	return "", fmt.Errorf("describe: want POD, pod/POD or pod POD, got %d argument(s)", len(args))
}

// podArg is the pod a POD argument names: NAME or, as kubectl takes it,
// pod/NAME (pods/, po/).
func podArg(arg string) (string, error) {
	kind, name, ok := strings.Cut(arg, "/")
	if !ok {
		return arg, nil
	}
	if !isPodKind(kind) || name == "" {
		return "", fmt.Errorf("%q: berth takes pods only (POD or pod/POD)", arg)
	}
	return name, nil
}
