package cli

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// completePods is the ValidArgsFunction of a command whose one argument is
// a POD: the names of the pods in its --namespace (default "default") on the
// berth its flags locate (see locator). Errors mean no completions.
func completePods(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return podNames(cmd, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// withPodCompletion gives cmd completePods unless it completes its own
// arguments already.
func withPodCompletion(cmd *cobra.Command) *cobra.Command {
	if cmd.ValidArgsFunction == nil {
		cmd.ValidArgsFunction = completePods
	}
	return cmd
}

// podNames lists the pods of cmd's namespace whose names start with prefix.
func podNames(cmd *cobra.Command, prefix string) []string {
	flag := func(name string) string {
		if f := cmd.Flags().Lookup(name); f != nil {
			return f.Value.String()
		}
		return ""
	}
	c := apiClient{locator{server: flag("server"), tokenFile: flag("token-file"), configFile: flag("config")}}
	ns := flag("namespace")
	if ns == "" {
		ns = "default"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	cs, _, err := c.kube()
	if err != nil {
		return nil
	}
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range list.Items {
		if strings.HasPrefix(p.Name, prefix) {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out
}
