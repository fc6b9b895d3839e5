package cli

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/berth-dev/berth/agent"
	"github.com/berth-dev/berth/config"
)

func runCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the agent: watch the sources and keep their pods running on Docker",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load(cmd.Flags())
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return run(ctx, cfg)
		},
	}
	config.BindFlags(cmd.Flags())
	return cmd
}

func newLogger(cfg *config.Config) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: lvl}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

func run(ctx context.Context, cfg *config.Config) error {
	log := newLogger(cfg)
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	klog.SetSlogLogger(log.With("component", "cadvisor")) // cAdvisor and client-go log through klog
	a, err := agent.New(cfg, log)
	if err != nil {
		return err
	}
	return a.Run(ctx)
}
