package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// logsFlags are berth logs' own flags, named as kubectl logs'.
type logsFlags struct {
	namespace  string
	container  string
	follow     bool
	previous   bool
	timestamps bool
	tail       int
	since      time.Duration
	sinceTime  string
	limitBytes int64
}

func logsCmd() *cobra.Command {
	var c apiClient
	var f logsFlags
	cmd := &cobra.Command{
		Use:   "logs POD|pod/POD [-c CONTAINER] [-n NAMESPACE] [-f] [-p] [--tail N] [--timestamps] [--since D|--since-time T] [--limit-bytes N]",
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
			pod, err := podArg(args[0])
			if err != nil {
				return err
			}
			return runLogs(ctx, &c, f, pod, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	c.addFlags(cmd.Flags())
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "default", "namespace of the pod")
	cmd.Flags().StringVarP(&f.container, "container", "c", "", "container name (default: as kubectl picks it)")
	cmd.Flags().BoolVarP(&f.follow, "follow", "f", false, "stream new lines until interrupted")
	cmd.Flags().BoolVarP(&f.previous, "previous", "p", false, "logs of the previous, terminated instance of the container")
	cmd.Flags().BoolVar(&f.timestamps, "timestamps", false, "prefix each line with its RFC3339 timestamp")
	cmd.Flags().IntVar(&f.tail, "tail", -1, "lines of recent log to print; -1 for all")
	cmd.Flags().DurationVar(&f.since, "since", 0, "only lines newer than this, e.g. 5s, 2m or 3h")
	cmd.Flags().StringVar(&f.sinceTime, "since-time", "", "only lines after this RFC3339 time")
	cmd.Flags().Int64Var(&f.limitBytes, "limit-bytes", 0, "at most this many bytes of log; 0 for all")
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
	switch {
	case f.since != 0 && f.sinceTime != "":
		return errors.New("logs: --since and --since-time do not go together")
	case f.since != 0:
		secs := int64(math.Ceil(f.since.Seconds()))
		opts.SinceSeconds = &secs
	case f.sinceTime != "":
		t, err := time.Parse(time.RFC3339, f.sinceTime)
		if err != nil {
			return fmt.Errorf("logs: --since-time %q is not an RFC3339 time (like 2026-01-02T15:04:05Z)", f.sinceTime)
		}
		opts.SinceTime = &metav1.Time{Time: t}
	}
	if f.limitBytes > 0 {
		opts.LimitBytes = &f.limitBytes
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
