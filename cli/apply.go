package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/berth-dev/berth/cluster"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/sources"
)

func applyCmd() *cobra.Command {
	var ef etcdFlags
	var files []string
	var node string
	var allowHost bool
	cmd := &cobra.Command{
		Use:   "apply -f FILE... --node NODE",
		Short: "Validate manifests and write their pods, ConfigMaps, Secrets and claims to a node's keys in etcd",
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
			l, err := sources.LoadAll(files, "etcd", applyOptions(node, allowHost))
			pods, objs := l.Pods, l.Objects
			for _, w := range l.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), w)
			}
			for _, e := range l.Errors {
				fmt.Fprintln(cmd.ErrOrStderr(), e.Error())
			}
			if err != nil {
				return err
			}
			if len(l.Errors) > 0 {
				return fmt.Errorf("%d error(s) in manifests; nothing written", len(l.Errors))
			}
			if len(pods) == 0 && len(objs) == 0 {
				return errors.New("no pod, ConfigMap, Secret or PersistentVolumeClaim in the manifests")
			}
			values := map[string][]byte{}
			for _, d := range pods {
				// The node derives the UID itself (from a declared one, if
				// any), so the one this decode derived is not written.
				d.Pod.UID = ""
				b, err := json.Marshal(d.Pod)
				if err != nil {
					return err
				}
				values[cluster.PodKey(cluster.PodsPrefix(node), d.Pod.Namespace, d.Pod.Name)] = b
			}
			var done []string
			for _, o := range objs {
				var v any = o.ConfigMap
				switch {
				case o.Secret != nil:
					v = o.Secret
				case o.PVC != nil:
					v = o.PVC
				}
				b, err := json.Marshal(v)
				if err != nil {
					return err
				}
				ns, name, _ := strings.Cut(o.Key(), "/")
				values[cluster.PodKey(cluster.ObjectPrefix(node, o.Kind), ns, name)] = b
				done = append(done, strings.ToLower(o.Kind)+"/"+name)
			}
			if err := ef.do(cmd.Context(), func(ctx context.Context, reg cluster.Registry) error {
				return reg.PutKeys(ctx, node, values)
			}); err != nil {
				return err
			}
			for _, name := range done {
				fmt.Fprintf(cmd.OutOrStdout(), "%s configured on node %s\n", name, node)
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

// applyOptions decode as a node's etcd source does.
func applyOptions(node string, allowHost bool) manifest.Options {
	o := manifest.Options{Node: node, Level: model.LevelBaseline}
	if allowHost {
		o.Level = model.LevelPrivileged
	}
	return o
}
