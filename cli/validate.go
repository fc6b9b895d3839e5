package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/sources"
)

func validateCmd() *cobra.Command {
	var strict bool
	var level, hostPorts string
	var sysctls []string
	cmd := &cobra.Command{
		Use:   "validate PATH...",
		Short: "Check pod manifests; print one file: pod: field: error line per problem, then the count of valid pods",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := validateOptions(level, strict, hostPorts, sysctls)
			if err != nil {
				return err
			}
			n, warns, errs, pathErr := sources.ValidateFiles(args, opts)
			for _, w := range warns {
				fmt.Fprintln(cmd.ErrOrStderr(), w)
			}
			for _, e := range errs {
				fmt.Fprintln(cmd.ErrOrStderr(), e.Error())
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d pod(s) valid\n", n)
			if len(errs) > 0 {
				pathErr = errors.Join(pathErr, fmt.Errorf("%d error(s) in manifests", len(errs)))
			}
			return pathErr
		},
	}
	cmd.Flags().StringVar(&level, "pod-security", "", "Pod Security level to check against: privileged (the file source's default), baseline (network sources') or restricted")
	cmd.Flags().BoolVar(&strict, "network-source", false, "check as a network source does by default (--pod-security baseline)")
	cmd.Flags().StringVar(&hostPorts, "host-ports", model.DefaultHostPorts.String(), "host ports baseline and restricted pods may claim (sources.<name>.host_ports)")
	cmd.Flags().StringSliceVar(&sysctls, "allowed-unsafe-sysctls", nil, "sysctls beyond the safe set that pods may set (allowed_unsafe_sysctls)")
	return cmd
}

// validateOptions are the checks of `berth validate`: the file source's
// (privileged) unless a level or --network-source says otherwise.
func validateOptions(level string, network bool, hostPorts string, sysctls []string) (manifest.Options, error) {
	opts := manifest.Options{Level: model.LevelPrivileged, AllowedUnsafeSysctls: sysctls}
	if network {
		opts.Level = model.LevelBaseline
	}
	if level != "" {
		l, err := model.ParsePodSecurityLevel(level)
		if err != nil {
			return opts, fmt.Errorf("--pod-security: %w", err)
		}
		if network && l != model.LevelBaseline {
			return opts, fmt.Errorf("--network-source means --pod-security baseline, not %s", l)
		}
		opts.Level = l
	}
	ports, err := model.ParsePortRanges(hostPorts)
	if err != nil {
		return opts, fmt.Errorf("--host-ports: %w", err)
	}
	opts.HostPorts = ports
	return opts, nil
}
