package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/berth-dev/berth/cluster"
)

func deleteCmd() *cobra.Command {
	del := &cobra.Command{Use: "delete", Short: "Delete pods from etcd, or claims from the local berth"}
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
	del.AddCommand(pod, deleteClaimsCmd())
	return del
}
