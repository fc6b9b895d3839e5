package main

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/config"
	"github.com/berth-dev/berth/controller"
	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/informer"
	"github.com/berth-dev/berth/metrics"
	"github.com/berth-dev/berth/prober"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/server"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/stats"
	"github.com/berth-dev/berth/store"
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
	slog.SetDefault(log)
	klog.SetSlogLogger(log.With("component", "cadvisor")) // cAdvisor and client-go log through klog

	var tokens []string
	if cfg.TokenFile != "" {
		t, err := server.LoadTokens(cfg.TokenFile)
		if err != nil {
			return err
		}
		tokens = t
	} else if !cfg.Loopback() {
		return fmt.Errorf("server.address %s is not loopback: set server.token_file to protect the API", cfg.ServerAddress)
	}
	if err := os.MkdirAll(cfg.RootDir, 0o755); err != nil {
		return fmt.Errorf("root_dir: %w", err)
	}

	rt, err := runtime.NewDocker(cfg.DockerHost)
	if err != nil {
		return fmt.Errorf("docker.host %s: %w", cfg.DockerHost, err)
	}
	defer rt.Close()
	if cfg.DockerConfig != "" {
		creds, err := runtime.LoadCredentials(cfg.DockerConfig)
		if err != nil {
			return fmt.Errorf("docker.config: %w", err)
		}
		rt.SetCredentials(creds)
	}

	st, err := store.New(nil)
	if err != nil {
		return err
	}
	m := metrics.New()
	m.RegisterState(st)
	clk := clock.RealClock{}
	recent := events.NewBuffer(1000)
	recorder := events.Multi{recent}
	var etcdEvents *events.EtcdSink
	if len(cfg.EtcdEndpoints) > 0 {
		cli, err := clientv3.New(clientv3.Config{Endpoints: cfg.EtcdEndpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			return fmt.Errorf("sources.etcd.endpoints: %w", err)
		}
		defer cli.Close()
		etcdEvents = events.NewEtcdSink(cli, log)
		recorder = append(recorder, etcdEvents)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ctrl *controller.Controller
	hooks := prober.NewExecutor(rt)
	probes := prober.NewManager(ctx, hooks, clk, func(key string) { ctrl.Enqueue(key) }, m)
	ctrl = controller.New(controller.Config{
		Node:         cfg.NodeName,
		RootDir:      cfg.RootDir,
		Workers:      cfg.Workers,
		Resync:       cfg.Resync,
		Backoff:      controller.Backoff{Initial: cfg.BackoffInitial, Max: cfg.BackoffMax},
		PauseImage:   cfg.PodInfraImage,
		PauseBinary:  pauseBinary(cfg, log),
		Clock:        clk,
		Metrics:      m,
		QueueMetrics: m.WorkqueueProvider(),
		Events:       recorder,
		Prober:       probes,
		Hooks:        hooks,
		Log:          log,
	}, st, rt)
	st.SetNotifier(ctrl.Enqueue)

	srcInf := informer.NewSourceInformer(st, clk, m, log)
	var srcs []sources.Source
	if cfg.FilePath != "" {
		srcs = append(srcs, sources.NewFileSource("file", cfg.FilePath, cfg.FileRescan, sources.Options{AllowHostAccess: true, Node: cfg.NodeName}))
	}
	if cfg.HTTPURL != "" {
		srcs = append(srcs, sources.NewHTTPSource("http", cfg.HTTPURL, cfg.HTTPInterval, cfg.HTTPHeaders,
			sources.Options{AllowHostAccess: cfg.AllowHostAccess["http"], Node: cfg.NodeName}))
	}
	if len(cfg.EtcdEndpoints) > 0 {
		srcs = append(srcs, sources.NewEtcdSource("etcd", sources.EtcdConfig{
			Endpoints: cfg.EtcdEndpoints, Prefix: cfg.EtcdPrefix, LegacyKey: cfg.EtcdLegacyKey,
		}, sources.Options{AllowHostAccess: cfg.AllowHostAccess["etcd"], Node: cfg.NodeName}))
	}
	var push *sources.PushSource
	if cfg.PushEnabled {
		push = sources.NewPushSource("push", filepath.Join(cfg.RootDir, "push"), sources.Options{AllowHostAccess: cfg.AllowHostAccess["push"], Node: cfg.NodeName})
		srcs = append(srcs, push)
	}
	for _, s := range srcs {
		if err := srcInf.Register(s.Name()); err != nil {
			return err
		}
	}
	dockerInf := informer.NewDockerInformer(rt, st, cfg.NodeName, clk, m, log)
	dockerInf.Relist = cfg.DockerRelist

	api := server.New(server.Options{
		Store:    st,
		Registry: m.Registry,
		Tokens:   tokens,
		Events:   recent.List,
		Ready: []server.Checker{
			server.SourcesSynced(st),
			func(ctx context.Context) error {
				if err := rt.Ping(ctx); err != nil {
					return fmt.Errorf("docker unreachable: %w", err)
				}
				if !dockerInf.Synced() {
					return errors.New("docker containers not listed yet")
				}
				return nil
			},
		},
	})
	server.RegisterLogs(api, rt)
	var statsProvider stats.Provider = stats.Unavailable{Reason: "cadvisor.enabled is false"}
	if cfg.CadvisorEnabled {
		statsProvider, err = stats.Open(ctx, stats.Options{NodeName: cfg.NodeName, Housekeeping: cfg.CadvisorHousekeeping,
			DockerHost: cfg.DockerHost, RootDir: cfg.RootDir, Store: st, Logger: log})
		if err != nil {
			log.Warn("container stats unavailable; /stats/summary, /spec and /metrics/cadvisor answer 503", "err", err)
		}
	}
	server.RegisterStats(api, statsProvider)
	if push != nil {
		server.RegisterPush(api, push.Routes())
	}
	addr := net.JoinHostPort(cfg.ServerAddress, strconv.Itoa(cfg.ServerPort))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	srv := server.HTTPServer(addr, api)
	done := make(chan struct{})
	var workers []func()
	start := func(f func()) {
		workers = append(workers, f)
		go func() {
			defer func() { done <- struct{}{} }()
			f()
		}()
	}
	start(func() {
		var err error
		if cfg.TLSCertFile != "" {
			err = srv.ServeTLS(ln, cfg.TLSCertFile, cfg.TLSKeyFile)
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("api server failed", "err", err)
			cancel()
		}
	})
	start(func() {
		<-ctx.Done()
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		_ = srv.Shutdown(sctx)
	})
	log.Info("berth starting", "version", config.Version, "node", cfg.NodeName, "api", "http://"+ln.Addr().String(), "pods", cfg.FilePath)

	start(func() { dockerInf.Run(ctx) })
	if etcdEvents != nil {
		start(func() { etcdEvents.Run(ctx) })
	}
	// Adoption: the controller acts only once the engine's containers are
	// in the store, so nothing running is duplicated.
	if waitUntil(ctx, dockerInf.Synced) {
		log.Info("docker containers listed; starting sources and controller")
		updates := make(chan sources.Update)
		start(func() { srcInf.Run(ctx, updates) })
		for _, s := range srcs {
			start(func() {
				if err := s.Run(ctx, updates); err != nil {
					log.Error("source stopped", "source", s.Name(), "err", err)
				}
			})
		}
		start(func() { ctrl.Run(ctx) })
	}
	<-ctx.Done()
	for range workers {
		<-done
	}
	log.Info("berth stopped; pods keep running")
	return nil
}

func pauseBinary(cfg *config.Config, log *slog.Logger) string {
	if cfg.PodInfraImage != config.DefaultPauseImage() {
		return ""
	}
	return staticSelf(log)
}

// waitUntil polls cond until it holds (true) or ctx ends (false).
func waitUntil(ctx context.Context, cond func() bool) bool {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return true
}
