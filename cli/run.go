package cli

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
			cfg, err := loadRunConfig(cmd.Flags())
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return run(ctx, cfg)
		},
	}
	config.BindFlags(cmd.Flags())
	cmd.Flags().Lookup("config").Usage = "configuration file (YAML, JSON or TOML; default: $" + envConfig + ", else " + defaultConfigFile + " if it exists)"
	return cmd
}

// loadRunConfig loads the agent's configuration from the file the client
// commands read too (--config, else $BERTH_CONFIG, else
// /etc/berth/config.yaml if it exists), then BERTH_ variables and flags.
func loadRunConfig(fs *pflag.FlagSet) (*config.Config, error) {
	l := &locator{configFile: fs.Lookup("config").Value.String()}
	path, _, err := l.configFilePath()
	if err != nil {
		return nil, err
	}
	if path != "" {
		if err := fs.Set("config", path); err != nil {
			return nil, err
		}
	}
	return config.Load(fs)
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
