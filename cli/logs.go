package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
)

// logsFlags are berth logs' own flags, named as kubectl logs'.
type logsFlags struct {
	namespace  string
	container  string
	follow     bool
	previous   bool
	timestamps bool
	tail       int
}

func logsCmd() *cobra.Command {
	var c apiClient
	var f logsFlags
	cmd := &cobra.Command{
		Use:   "logs POD [-c CONTAINER] [-n NAMESPACE] [-f] [-p] [--tail N] [--timestamps]",
		Short: "Print the logs of a container of a pod",
		Long: "Print the logs (stdout and stderr) of a container of a pod, through berth's API.\n" +
			"Without -c, the container is the kubectl.kubernetes.io/default-container annotation's\n" +
			"or the pod's first, as kubectl picks it (with a note on stderr when there is a choice).\n" +
			"-f follows until interrupted; -p prints the previous, terminated instance's logs.",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completePods,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runLogs(ctx, &c, f, args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	c.addFlags(cmd.Flags())
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "default", "namespace of the pod")
	cmd.Flags().StringVarP(&f.container, "container", "c", "", "container name (default: as kubectl picks it)")
	cmd.Flags().BoolVarP(&f.follow, "follow", "f", false, "stream new lines until interrupted")
	cmd.Flags().BoolVarP(&f.previous, "previous", "p", false, "logs of the previous, terminated instance of the container")
	cmd.Flags().BoolVar(&f.timestamps, "timestamps", false, "prefix each line with its RFC3339 timestamp")
	cmd.Flags().IntVar(&f.tail, "tail", -1, "lines of recent log to print; -1 for all")
	return cmd
}

// runLogs copies the container's logs (pods/log) to stdout; an interrupt
// (ctx) ends it without error.
func runLogs(ctx context.Context, c *apiClient, f logsFlags, pod string, stdout, stderr io.Writer) error {
	cs, _, err := c.kube()
	if err != nil {
		return err
	}
	if f.container == "" {
		name, err := defaultContainer(ctx, c, cs, f.namespace, pod, stderr)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		f.container = name
	}
	opts := &v1.PodLogOptions{Container: f.container, Follow: f.follow, Previous: f.previous, Timestamps: f.timestamps}
	if f.tail >= 0 {
		tail := int64(f.tail)
		opts.TailLines = &tail
	}
	body, err := cs.CoreV1().Pods(f.namespace).GetLogs(pod, opts).Stream(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return c.kubeError(ctx, err)
	}
	defer body.Close()
	_, err = io.Copy(stdout, body)
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("logs of %s/%s container %s: %w", f.namespace, pod, f.container, err)
	}
	return nil
}
