package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/cluster"
	"github.com/berth-dev/berth/etcdclient"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/server"
	"github.com/berth-dev/berth/sources"
)

// etcdFlags are the cluster commands' way to etcd, named like etcdctl's
// (--endpoints, --cacert, --cert, --key, --user) with an etcd- prefix; each
// defaults to the agent's BERTH_SOURCES_ETCD_* variable. The password never
// comes from the command line, which every user of the host can read: it
// is read from --etcd-password-file, else $BERTH_SOURCES_ETCD_PASSWORD.
type etcdFlags struct {
	endpoints               string
	cacert, cert, key, user string
	passwordFile            string
	allowInsecureAuth       bool
	timeout                 time.Duration
}

func (f *etcdFlags) addFlags(fs *pflag.FlagSet) {
	env := func(k, def string) string {
		if v := os.Getenv("BERTH_SOURCES_ETCD_" + k); v != "" {
			return v
		}
		return def
	}
	insecure, _ := strconv.ParseBool(env("ALLOW_INSECURE_AUTH", "false"))
	fs.StringVar(&f.endpoints, "etcd-endpoints", env("ENDPOINTS", "http://127.0.0.1:2379"), "etcd endpoints, comma-separated")
	fs.StringVar(&f.cacert, "etcd-cacert", env("TLS_CA_FILE", ""), "CA file verifying etcd's certificate")
	fs.StringVar(&f.cert, "etcd-cert", env("TLS_CERT_FILE", ""), "client certificate file for etcd")
	fs.StringVar(&f.key, "etcd-key", env("TLS_KEY_FILE", ""), "client key file for etcd")
	fs.StringVar(&f.user, "etcd-user", env("USERNAME", ""), "etcd username (the password comes from --etcd-password-file or $BERTH_SOURCES_ETCD_PASSWORD)")
	fs.StringVar(&f.passwordFile, "etcd-password-file", env("PASSWORD_FILE", ""), "file holding the etcd password (mode 0600 or stricter)")
	fs.BoolVar(&f.allowInsecureAuth, "etcd-allow-insecure-auth", insecure, "allow the etcd password over plain http://")
	fs.DurationVar(&f.timeout, "etcd-timeout", 10*time.Second, "time limit of the etcd requests")
}

// errPasswordInArgv refuses --etcd-user NAME:PASSWORD.
var errPasswordInArgv = errors.New("--etcd-user: a password on the command line is readable by every user of the host; " +
	"put it in --etcd-password-file (mode 0600) or $BERTH_SOURCES_ETCD_PASSWORD")

func (f *etcdFlags) config() (etcdclient.Config, error) {
	c := etcdclient.Config{Endpoints: etcdclient.SplitEndpoints(f.endpoints), CAFile: f.cacert, CertFile: f.cert, KeyFile: f.key,
		Username: f.user, AllowInsecureAuth: f.allowInsecureAuth, DialTimeout: 5 * time.Second}
	if strings.Contains(f.user, ":") {
		return c, errPasswordInArgv
	}
	if f.passwordFile != "" {
		b, err := server.ReadSecret("--etcd-password-file", f.passwordFile)
		if err != nil {
			return c, err
		}
		c.Password = strings.TrimRight(string(b), "\r\n")
	} else if f.user != "" {
		c.Password = os.Getenv("BERTH_SOURCES_ETCD_PASSWORD")
	}
	return c, c.Validate(func(field string) string { return etcdFlagOf[field] })
}

// etcdFlagOf names the flag of each etcdclient.Config field, for Validate.
var etcdFlagOf = map[string]string{"endpoints": "--etcd-endpoints", "tls.ca_file": "--etcd-cacert", "tls.cert_file": "--etcd-cert",
	"tls.key_file": "--etcd-key", "username": "--etcd-user", "password": "the password", "allow_insecure_auth": "--etcd-allow-insecure-auth"}

// registry connects to etcd; the caller closes the client.
func (f *etcdFlags) registry(ctx context.Context) (cluster.Registry, *clientv3.Client, error) {
	c, err := f.config()
	if err != nil {
		return cluster.Registry{}, nil, err
	}
	cli, err := c.New(ctx)
	if err != nil {
		return cluster.Registry{}, nil, fmt.Errorf("etcd %s: %w", f.endpoints, err)
	}
	return cluster.Registry{Client: cli}, cli, nil
}

// do runs fn with a registry on a fresh client, within --etcd-timeout.
func (f *etcdFlags) do(ctx context.Context, fn func(ctx context.Context, reg cluster.Registry) error) error {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	reg, cli, err := f.registry(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	return f.wrap(fn(ctx, reg))
}

func (f *etcdFlags) wrap(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("etcd %s did not answer within %s: %w", f.endpoints, f.timeout, err)
	}
	return err
}

func applyCmd() *cobra.Command {
	var ef etcdFlags
	var files []string
	var node string
	var allowHost bool
	cmd := &cobra.Command{
		Use:   "apply -f FILE... --node NODE",
		Short: "Validate pod manifests and write them to a node's pods in etcd",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if node == "" {
				return errors.New("--node is required")
			}
			if len(files) == 0 {
				return errors.New("-f is required")
			}
			// Decoded as the node's etcd source decodes them, so the derived
			// UIDs are the ones the agent derives.
			pods, warns, errs, err := sources.LoadFiles(files, "etcd", applyOptions(node, allowHost))
			for _, w := range warns {
				fmt.Fprintln(cmd.ErrOrStderr(), w)
			}
			for _, e := range errs {
				fmt.Fprintln(cmd.ErrOrStderr(), e.Error())
			}
			if err != nil {
				return err
			}
			if len(errs) > 0 {
				return fmt.Errorf("%d error(s) in manifests; nothing written", len(errs))
			}
			if len(pods) == 0 {
				return errors.New("no pod in the manifests")
			}
			manifests := map[[2]string][]byte{}
			for _, d := range pods {
				// The node derives the UID itself (from a declared one, if
				// any), so the one this decode derived is not written.
				d.Pod.UID = ""
				b, err := json.Marshal(d.Pod)
				if err != nil {
					return err
				}
				manifests[[2]string{d.Pod.Namespace, d.Pod.Name}] = b
			}
			if err := ef.do(cmd.Context(), func(ctx context.Context, reg cluster.Registry) error {
				return reg.Put(ctx, node, manifests)
			}); err != nil {
				return err
			}
			for _, d := range pods {
				fmt.Fprintf(cmd.OutOrStdout(), "pod/%s configured on node %s\n", d.Pod.Name, node)
			}
			return nil
		},
	}
	ef.addFlags(cmd.Flags())
	cmd.Flags().StringSliceVarP(&files, "filename", "f", nil, "manifest file or directory (repeatable)")
	cmd.Flags().StringVar(&node, "node", "", "node whose pods to write (its /registry/hosts/<node>/pods/ prefix)")
	cmd.Flags().BoolVar(&allowHost, "allow-host-access", false, "accept privileged, hostPath, hostNetwork and hostPID (the node must allow them: sources.etcd.allow_host_access)")
	return cmd
}

func deleteCmd() *cobra.Command {
	del := &cobra.Command{Use: "delete", Short: "Delete objects from etcd"}
	var ef etcdFlags
	var node, namespace string
	pod := &cobra.Command{
		Use:   "pod NAME... --node NODE",
		Short: "Delete pods from a node's pods in etcd (the node stops them)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if node == "" {
				return errors.New("--node is required")
			}
			return ef.do(cmd.Context(), func(ctx context.Context, reg cluster.Registry) error {
				var errs []error
				for _, name := range args {
					if err := reg.Delete(ctx, node, namespace, name); err != nil {
						errs = append(errs, err)
						continue
					}
					fmt.Fprintf(cmd.OutOrStdout(), "pod %q deleted from node %s\n", name, node)
				}
				return errors.Join(errs...)
			})
		},
	}
	ef.addFlags(pod.Flags())
	pod.Flags().StringVar(&node, "node", "", "node whose pod to delete")
	pod.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace of the pods")
	del.AddCommand(pod)
	return del
}

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
			return printNodes(cmd.OutOrStdout(), nodes, output, time.Now())
		},
	}
	ef.addFlags(cmd.Flags())
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: wide, json or yaml")
	return cmd
}

func printNodes(w io.Writer, nodes []v1.Node, output string, now time.Time) error {
	list := v1.NodeList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "NodeList"}, Items: nodes}
	switch output {
	case "json":
		return printJSON(w, list)
	case "yaml":
		return printYAML(w, list)
	}
	h := []string{"NAME", "STATUS", "PODS", "VERSION", "AGE"}
	if output == "wide" {
		h = append(h, "INTERNAL-IP", "KERNEL-VERSION", "CONTAINER-RUNTIME")
	}
	rows := [][]string{h}
	for i := range nodes {
		n := &nodes[i]
		row := []string{n.Name, nodeStatus(n), n.Annotations[cluster.PodsAnnotation], n.Status.NodeInfo.KubeletVersion,
			age(now.Sub(n.CreationTimestamp.Time))}
		if output == "wide" {
			ip := "<none>"
			for _, a := range n.Status.Addresses {
				if a.Type == v1.NodeInternalIP {
					ip = a.Address
				}
			}
			row = append(row, ip, n.Status.NodeInfo.KernelVersion, n.Status.NodeInfo.ContainerRuntimeVersion)
		}
		rows = append(rows, row)
	}
	return (&table{w: w}).write(rows...)
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

// applyOptions decode as a node's etcd source does.
func applyOptions(node string, allowHost bool) sources.Options {
	o := sources.Options{Node: node, Level: model.LevelBaseline}
	if allowHost {
		o.Level = model.LevelPrivileged
	}
	return o
}
