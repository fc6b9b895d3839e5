// Package cli is berth's command line: `berth run` (the agent), the
// client commands that reach a running berth through its Kubernetes API
// with client-go (get, logs, describe, exec; found as locator says),
// `berth kubeconfig` for kubectl,
// the cluster commands that read and write etcd (apply, delete, get nodes,
// get pods --all-nodes), validate, version, and the pod sandbox's pause.
package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Main runs berth with args (os.Args[1:]) and returns the process's exit
// code: a remote command's own for berth exec, 1 for any other error, which
// it prints to stderr.
func Main(args []string) int {
	root := &cobra.Command{
		Use:           "berth",
		Short:         "berth runs Kubernetes pod manifests on the local Docker engine",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(runCmd(), validateCmd(), versionCmd(), pauseCmd(), getCmd(), withPodCompletion(execCmd()),
		logsCmd(), describeCmd(), applyCmd(), deleteCmd(), kubeconfigCmd())
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		if code, ok := remoteExit(err); ok {
			return code // berth exec: the remote command's exit code
		}
		fmt.Fprintln(os.Stderr, "berth:", err)
		return 1
	}
	return 0
}
