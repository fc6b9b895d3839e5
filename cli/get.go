package cli

import (
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
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
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

// outputFormat is a parsed -o: one of "", wide, json, yaml, name, or
// jsonpath with its template.
type outputFormat struct {
	kind     string
	template string
}

func parseOutput(o string) (outputFormat, error) {
	if t, ok := strings.CutPrefix(o, "jsonpath="); ok {
		if t == "" {
			return outputFormat{}, errors.New("-o jsonpath= needs a template, e.g. -o jsonpath='{.items[*].metadata.name}'")
		}
		return outputFormat{kind: "jsonpath", template: t}, nil
	}
	switch o {
	case "", "wide", "json", "yaml", "name":
		return outputFormat{kind: o}, nil
	}
	return outputFormat{}, fmt.Errorf("unknown output format %q (want wide, json, yaml, name or jsonpath=TEMPLATE)", o)
}

// table reports whether the format prints the server's Table.
func (o outputFormat) table() bool { return o.kind == "" || o.kind == "wide" }

func checkOutput(output string) error {
	switch output {
	case "", "wide", "json", "yaml":
		return nil
	}
	return fmt.Errorf("unknown output format %q (want wide, json or yaml)", output)
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
