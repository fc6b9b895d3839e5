package cli

import (
	"github.com/spf13/cobra"

	"github.com/berth-dev/berth/pause"
)

// pauseCmd is the entrypoint of the pod sandbox image (see package pause).
func pauseCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "pause",
		Short:  "Block until SIGTERM or SIGINT, reaping orphans (the pod sandbox process)",
		Args:   cobra.NoArgs,
		Hidden: true,
		Run:    func(*cobra.Command, []string) { pause.Run() },
	}
}
