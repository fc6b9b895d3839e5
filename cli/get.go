package cli

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// podKinds are the names kubectl takes for pods.
var podKinds = []string{"pods", "pod", "po"}

func getCmd() *cobra.Command {
	var client apiClient
	var ef etcdFlags
	var f getFlags
	run := func(cmd *cobra.Command, names []string) error {
		if f.allNodes {
			return getAllNodePods(cmd, &ef, f, names)
		}
		ctx := cmd.Context()
		if f.watch {
			var stop func()
			ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
		}
		return getPods(ctx, &client, f, names, cmd.OutOrStdout(), cmd.ErrOrStderr())
	}
	get := &cobra.Command{
		Use:   "get pods [NAME...] | get pod/NAME...",
		Short: "Show pods (and nodes, claims) as kubectl get does",
		Long: "Show the pods of a running berth through its Kubernetes API, in kubectl's columns (the server's\n" +
			"Table): every namespace's without -n (with a NAMESPACE column, as -A), one namespace's with -n.\n" +
			"Pods are named as kubectl names them: pods, pod, po, NAME arguments or pod/NAME.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			names, err := podRefs(args)
			if err != nil {
				return err
			}
			return run(cmd, names)
		},
	}
	pods := &cobra.Command{
		Use:     "pods [NAME...]",
		Aliases: podKinds[1:],
		Short:   "List pods with their status (NAMESPACE NAME READY STATUS RESTARTS AGE); -w follows changes",
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd, args)
		},
		ValidArgsFunction: func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return podNames(cmd, toComplete), cobra.ShellCompDirectiveNoFileComp
		},
	}
	for _, fs := range []*pflag.FlagSet{get.Flags(), pods.Flags()} {
		client.addFlags(fs)
		f.addFlags(fs)
		ef.addFlags(fs)
	}
	get.AddCommand(pods, getNodesCmd(), getClaimsCmd())
	return get
}

// getFlags are the flags of berth get pods, named as kubectl get's.
type getFlags struct {
	output        string
	namespace     string
	allNamespaces bool
	selector      string
	watch         bool
	watchEvents   bool
	allNodes      bool
}

func (f *getFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&f.output, "output", "o", "", "output format: wide, json, yaml, name or jsonpath=TEMPLATE")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "only this namespace's pods (default: every namespace's; \"default\" for NAME arguments)")
	fs.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "every namespace's pods (the default without -n)")
	fs.StringVarP(&f.selector, "selector", "l", "", "label selector, e.g. app=web,tier!=db")
	fs.BoolVarP(&f.watch, "watch", "w", false, "after the list, print a row for every change until interrupted")
	fs.BoolVar(&f.watchEvents, "output-watch-events", false, "with --watch, show the event type (ADDED, MODIFIED, DELETED) of each row")
	fs.BoolVar(&f.allNodes, "all-nodes", false, "list every node's pods from etcd (adds a NODE column) instead of asking one berth")
}

// podRefs are the pod names of get's arguments: KIND/NAME each, KIND one
// of podKinds (pods NAME goes to the pods command).
func podRefs(args []string) ([]string, error) {
	var names []string
	for _, a := range args {
		kind, name, ok := strings.Cut(a, "/")
		if !ok {
			return nil, fmt.Errorf("get: unknown resource type %q: berth get serves pods (pods, pod, po, pod/NAME), nodes and persistentvolumeclaims (pvc)", a)
		}
		if !isPodKind(kind) || name == "" {
			return nil, fmt.Errorf("get: %q: berth get serves pod/NAME only", a)
		}
		names = append(names, name)
	}
	return names, nil
}
