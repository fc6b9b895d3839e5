package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/berth-dev/berth/config"
)

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print berth's version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "berth", config.Version)
		},
	}
}
