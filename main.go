// Command berth is a node agent that makes the local Docker engine run the
// Kubernetes pods declared in its sources, and keeps them running.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "berth",
		Short:         "berth runs Kubernetes pod manifests on the local Docker engine",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(runCmd(), validateCmd(), versionCmd(), pauseCmd(), getCmd(), withPodCompletion(execCmd()),
		logsCmd(), describeCmd(), applyCmd(), deleteCmd())
	if err := root.Execute(); err != nil {
		if code, ok := remoteExit(err); ok {
			os.Exit(code) // berth exec: the remote command's exit code
		}
		fmt.Fprintln(os.Stderr, "berth:", err)
		os.Exit(1)
	}
}
