package main

import (
	"context"
	"debug/elf"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

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

// staticSelf returns berth's own executable when it is statically linked,
// so it can serve as the pause image; "" otherwise.
func staticSelf(log *slog.Logger) string {
	exe, err := os.Executable()
	if err != nil {
		log.Warn("cannot locate own executable for the pause image", "err", err)
		return ""
	}
	f, err := elf.Open(exe)
	if err != nil {
		log.Warn("cannot read own executable for the pause image", "err", err)
		return ""
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			log.Warn("berth is dynamically linked and cannot build its pause image; build with CGO_ENABLED=0 or set pod_infra_image", "exe", exe)
			return ""
		}
	}
	return exe
}

func run(ctx context.Context, cfg *config.Config) error {
	log := newLogger(cfg)
	klog.SetSlogLogger(log.With("component", "cadvisor")) // cAdvisor and client-go log through klog
	a, err := newAgent(cfg, log)
	if err != nil {
		return err
	}
	return a.Run(ctx)
}

func pauseBinary(cfg *config.Config, log *slog.Logger) string {
	if cfg.PodInfraImage != config.DefaultPauseImage() {
		return ""
	}
	return staticSelf(log)
}
