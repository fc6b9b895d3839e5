package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

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

// applyOptions decode as a node's etcd source does.
func applyOptions(node string, allowHost bool) manifest.Options {
	o := manifest.Options{Node: node, Level: model.LevelBaseline}
	if allowHost {
		o.Level = model.LevelPrivileged
	}
	return o
}
