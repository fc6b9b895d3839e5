// Package agent is berth's composition root: New builds every component of
// one node agent from the configuration and wires them, Run runs them. The
// components' behaviour lives in their own packages, not here.
package agent

import (
	"strings"

	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/berth-dev/berth/claims"
	"github.com/berth-dev/berth/cluster"
	"github.com/berth-dev/berth/restarts"

	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/sync/errgroup"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/config"
	"github.com/berth-dev/berth/controller"
	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/informer"
	"github.com/berth-dev/berth/internal/secretfile"
	"github.com/berth-dev/berth/kubeapi"
	"github.com/berth-dev/berth/kubeapi/nodelogs"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/metrics"
	"github.com/berth-dev/berth/pause"
	"github.com/berth-dev/berth/podfs"
	"github.com/berth-dev/berth/prober"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/server"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/sources/filesource"
	"github.com/berth-dev/berth/stats"
	"github.com/berth-dev/berth/store"
)

// Agent is one berth node agent: every component built from the
// configuration by New, wired in data-flow order (queue, store,
// controller, informers, sources, API). Nothing runs and nothing listens
// until Run; an Agent runs once.
type Agent struct {
	cfg   *config.Config
	log   *slog.Logger
	clock clock.WithTicker // every component's clock

	rt         *runtime.Docker
	st         *store.Store
	metrics    *metrics.Metrics
	ctrl       *controller.Controller
	claims     *claims.Service // seeds the store's claim volumes at start
	srcInf     *informer.SourceInformer
	dockerInf  *informer.DockerInformer
	srcs       []sources.Source
	etcdEvents *events.EtcdSink // nil without etcd or with sources.etcd.events off
	etcd       *clientv3.Client // nil without etcd; shared by the sinks and the lease
	node       controller.NodeInfo
	stats      stats.Provider
	api        *server.Server
	kubeNode   kubeNode // the Kubernetes API's node object, set by Run

	// certFile and keyFile serve the API over https ("": plain http).
	certFile, keyFile string

	// stopProbes ends the probe workers, which live beyond any one
	// reconcile; Run calls it on its way out.
	stopProbes context.CancelFunc
	closers    []func()
}

// New builds an Agent from cfg, logging to log. On error, whatever it
// opened is closed again.
func New(cfg *config.Config, log *slog.Logger) (_ *Agent, err error) {
	a := &Agent{cfg: cfg, log: log}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	tokens, pushTokens, err := loadTokens(cfg)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.RootDir, 0o755); err != nil {
		return nil, fmt.Errorf("root_dir: %w", err)
	}
	if err := podfs.New(cfg.RootDir).Prepare(); err != nil {
		return nil, fmt.Errorf("root_dir: %w", err)
	}

	rt, err := runtime.NewDocker(cfg.DockerHost)
	if err != nil {
		return nil, fmt.Errorf("docker.host %s: %w", cfg.DockerHost, err)
	}
	a.rt = rt
	a.closers = append(a.closers, func() { rt.Close() })
	rt.SetContainerLogs(runtime.ContainerLogs{MaxSize: cfg.ContainerLogMaxSize, MaxFiles: cfg.ContainerLogMaxFiles})
	if cfg.DockerConfig != "" {
		creds, err := runtime.LoadCredentials(cfg.DockerConfig)
		if err != nil {
			return nil, fmt.Errorf("docker.config: %w", err)
		}
		rt.SetCredentials(creds)
	}

	clk := clock.RealClock{}
	a.clock = clk
	if a.certFile, a.keyFile, err = servingCert(cfg, clk, log); err != nil {
		return nil, err
	}
	m := metrics.New()
	a.metrics = m
	// The queue comes first: the store and the prober report changes to it,
	// and the controller works it.
	queue := controller.NewQueue(clk, m.WorkqueueProvider())
	enqueue := func(key string) {
		if key != "" {
			queue.Add(key)
		}
	}
	st, err := store.New(enqueue, store.WithClock(clk), store.WithRespec(controller.Respec))
	if err != nil {
		return nil, err
	}
	a.st = st
	m.RegisterState(st)

	recent := store.EventRecorder{Store: st}
	recorder := events.Multi{recent}
	if len(cfg.EtcdEndpoints) > 0 {
		m.RegisterEtcd()
		ec := cfg.EtcdClient()
		ec.Observer = m
		cli, err := ec.New(context.Background())
		if err != nil {
			return nil, fmt.Errorf("sources.etcd: %w", err)
		}
		a.etcd = cli
		a.closers = append(a.closers, func() { cli.Close() })
		if cfg.EtcdEvents {
			a.etcdEvents = events.NewEtcdSink(cli, log)
			recorder = append(recorder, a.etcdEvents)
		}
	}

	probeCtx, stopProbes := context.WithCancel(context.Background())
	a.stopProbes = stopProbes
	hooks := prober.NewExecutor(rt)
	probes := prober.NewManager(probeCtx, hooks, clk, enqueue, m)
	node := nodeInfo(cfg.NodeIP)
	a.node = node
	if node.NoNegativeOOMScores {
		log.Warn("the host does not allow lowering OOM scores (no CAP_SYS_RESOURCE); pods' negative oom_score_adj become 0")
	}
	a.ctrl = controller.New(controller.Config{
		Node:             cfg.NodeName,
		NodeInfo:         node,
		RootDir:          cfg.RootDir,
		Workers:          cfg.Workers,
		MaxParallelStops: cfg.MaxParallelStops,
		Resync:           cfg.Resync,
		Backoff:          restarts.Backoff{Initial: cfg.BackoffInitial, Max: cfg.BackoffMax},
		PauseImage:       cfg.PodInfraImage,
		PauseBuild:       pauseBuild(cfg, log),
		Clock:            clk,
		Metrics:          m,
		Events:           recorder,
		Prober:           probes,
		Hooks:            hooks,
		Log:              log,
	}, st, rt, queue)

	a.srcInf = informer.NewSourceInformer(st, clk, m, log)
	// Refusals are node events of the API (kubectl get events, describe
	// node), aggregated by the store; etcd's /events holds pod events.
	a.srcInf.Events, a.srcInf.NodeName = recent, cfg.NodeName
	var push *sources.PushSource
	a.srcs, push = buildSources(cfg, node.IP, a.etcd, st, clk, log)
	for _, s := range a.srcs {
		if err := a.srcInf.Register(s.Name()); err != nil {
			return nil, err
		}
	}
	a.dockerInf = informer.NewDockerInformer(rt, st, cfg.NodeName, clk, m, log)
	a.dockerInf.Relist = cfg.DockerRelist
	a.dockerInf.Host = cfg.DockerHost

	api := server.New(server.Options{
		Store:      st,
		Clock:      clk,
		Node:       cfg.NodeName,
		Address:    cfg.ServerAddress,
		Registry:   m.Registry,
		Tokens:     tokens,
		PushTokens: pushTokens,
		Events:     recent.List,
		Ready:      append([]server.Checker{server.SourcesSynced(st), a.dockerReady}, fileSourceReady(a.srcs)...),

		MaxWatches:         cfg.MaxWatches,
		MaxWatchesPerToken: cfg.MaxWatchesPerToken,

		MaxMutatingRequests:         cfg.MaxMutatingRequests,
		MaxMutatingRequestsPerToken: cfg.MaxMutatingRequestsPerToken,
	})
	a.api = api
	server.RegisterLogs(api, rt)
	server.RegisterProbes(api, m.ProbeRegistry)
	server.RegisterRunningPods(api)
	server.RegisterExec(api, rt)
	a.claims = claims.New(st, rt, cfg.NodeName)
	server.RegisterClaims(api, a.claims)
	a.stats = stats.Unavailable{Reason: "cadvisor.enabled is false"}
	if cfg.CadvisorEnabled {
		c, err := stats.NewCadvisor(stats.Options{NodeName: cfg.NodeName, Housekeeping: cfg.CadvisorHousekeeping,
			DockerHost: cfg.DockerHost, RootDir: cfg.RootDir, Store: st, Logger: log})
		if err != nil {
			log.Warn("container stats unavailable; /stats/summary, /spec and /metrics/cadvisor answer 503", "err", err)
			a.stats = stats.Unavailable{Reason: err.Error()}
		} else {
			a.stats = c
		}
	}
	server.RegisterStats(api, a.stats)
	server.RegisterResource(api, a.stats)
	if push != nil {
		server.RegisterPush(api, push.Name(), push.Routes())
	}
	kube := kubeapi.New(kubeapi.Options{Store: st, Node: cfg.NodeName, Version: config.Version,
		Visible: api.Visible, Clock: clk, PushSource: pushName(push),
		NodeObject: a.kubeNode.object, Usage: kubeUsage{p: a.stats, window: cfg.CadvisorHousekeeping}})
	kube.AddStreams(rt)
	if push != nil {
		kube.AddWrites(push)
	} else {
		kube.RefuseWrites("writes go to the push source, which is off: set sources.push.enabled: true and a token file")
	}
	if cfg.NodeLogsDir != "" {
		kube.AddNodeLogs(cfg.NodeLogsDir)
		server.RegisterNodeLogs(api, nodelogs.Handler(cfg.NodeLogsDir))
	}
	server.RegisterKube(api, kube.Routes())
	return a, nil
}

// loadTokens reads the admin (server.token_file) and push
// (sources.push.token_file) tokens. Without admin tokens the API must listen
// on loopback only, and pushing needs a push token: config.Load refuses
// the push source without either file.
func loadTokens(cfg *config.Config) (admin, push []string, err error) {
	if cfg.TokenFile != "" {
		if admin, err = secretfile.Tokens("server.token_file", cfg.TokenFile); err != nil {
			return nil, nil, err
		}
	} else if !cfg.Loopback() {
		return nil, nil, fmt.Errorf("server.address %s is not loopback: set server.token_file to protect the API", cfg.ServerAddress)
	}
	if cfg.PushTokenFile != "" {
		if push, err = secretfile.Tokens("sources.push.token_file", cfg.PushTokenFile); err != nil {
			return nil, nil, err
		}
	}
	return admin, push, nil
}

// buildSources returns the configured sources, file first; push is also
// returned on its own (nil when disabled) for its API routes. The etcd
// source reads through etcd, the agent's one client; the quotas count the
// pods st holds (terminating ones too).
func buildSources(cfg *config.Config, nodeIP string, etcd *clientv3.Client, st *store.Store, clk clock.WithTicker, log *slog.Logger) (srcs []sources.Source, push *sources.PushSource) {
	held := func(source string) []string {
		uids, err := st.HeldPods(source)
		if err != nil {
			log.Error("cannot count the pods a source holds; its pods quota counts its declarations only", "source", source, "err", err)
		}
		return uids
	}
	opts := func(src string) sources.Options {
		q := cfg.Quotas[src]
		return sources.Options{Log: log, Clock: clk, Quota: sources.Quota{Pods: q.Pods, Objects: q.Objects, Bytes: q.Bytes, Held: held},
			Options: manifest.Options{Level: cfg.PodSecurity[src], HostPorts: cfg.HostPorts[src],
				AllowedUnsafeSysctls: cfg.AllowedUnsafeSysctls, MaxContainers: cfg.MaxContainersPerPod,
				DeriveUIDs: src != "file", NodeIP: nodeIP, Node: cfg.NodeName, SandboxRepositories: pause.Reserved(cfg.PodInfraImage)}}
	}
	if cfg.FilePath != "" {
		fs := filesource.New("file", cfg.FilePath, cfg.FileRescan, opts("file"))
		fs.OwnersFile = filepath.Join(cfg.RootDir, "sources", "file-owners.json")
		srcs = append(srcs, fs)
	}
	if cfg.HTTPURL != "" {
		srcs = append(srcs, sources.NewHTTPSource("http", cfg.HTTPURL, cfg.HTTPInterval, cfg.HTTPHeaders,
			opts("http")))
	}
	if len(cfg.EtcdEndpoints) > 0 {
		es := sources.NewEtcdSource("etcd", sources.EtcdConfig{Client: cfg.EtcdClient(), Conn: etcd, Prefix: cfg.EtcdPrefix,
			ObjectPrefixes: objectPrefixes(cfg.EtcdPrefix, cfg.NodeName), LegacyKey: cfg.EtcdLegacyKey}, opts("etcd"))
		es.CheckInterval, es.RequestTimeout = cfg.EtcdCheckInterval, cfg.EtcdRequestTimeout
		srcs = append(srcs, es)
	}
	if cfg.PushEnabled {
		push = sources.NewPushSource("push", filepath.Join(cfg.RootDir, "push"), opts("push"))
		srcs = append(srcs, push)
	}
	return srcs, push
}

// dockerReady is the readiness check of the engine and its first listing.
func (a *Agent) dockerReady(ctx context.Context) error {
	if err := a.rt.Ping(ctx); err != nil {
		return fmt.Errorf("docker unreachable: %w", err)
	}
	if !a.dockerInf.Synced() {
		return errors.New("docker containers not listed yet")
	}
	return nil
}

func (a *Agent) close() {
	if a.stopProbes != nil {
		a.stopProbes()
	}
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}

// Run serves the API, follows the engine and, once the engine's containers
// are listed (adoption: nothing running is duplicated), the sources and the
// controller. It returns when ctx ends and every part has stopped (nil), or
// when the API server fails (its error). Pods keep running either way.
func (a *Agent) Run(ctx context.Context) error {
	defer a.close()
	cfg, log := a.cfg, a.log
	addr := net.JoinHostPort(cfg.ServerAddress, strconv.Itoa(cfg.ServerPort))
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	conns, fdLimit := server.ConnectionCap(cfg.MaxConnections)
	if conns < cfg.MaxConnections {
		log.Warn("server.max_connections lowered to half the open-file limit, so that API clients never take the sources' descriptors",
			"max_connections", cfg.MaxConnections, "open_file_limit", fdLimit, "using", conns)
	}
	ln := server.LimitConnections(tcp, conns)
	srv := server.HTTPServer(addr, a.api)
	srv.ConnState = ln.ConnState
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		var err error
		if a.certFile != "" {
			err = srv.ServeTLS(ln, a.certFile, a.keyFile)
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("api server: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return nil
	})
	scheme := "http://"
	if a.certFile != "" {
		scheme = "https://"
	}
	log.Info("berth starting", "version", config.Version, "node", cfg.NodeName, "api", scheme+ln.Addr().String(), "pods", cfg.FilePath)

	if err := a.stats.Start(ctx); err != nil {
		log.Warn("container stats unavailable; /stats/summary, /spec and /metrics/cadvisor answer 503", "err", err)
	}
	g.Go(func() error { a.dockerInf.Run(ctx); return nil })
	if a.etcdEvents != nil {
		g.Go(func() error { a.etcdEvents.Run(ctx); return nil })
	}
	host := hostInfo(a)
	if h, err := withMachineInfo(ctx, host, a.stats); err == nil {
		host = h
	} else {
		log.Info("node capacity from /proc (no cAdvisor machine info)", "err", err)
	}
	a.kubeNode.set(a, host)
	if a.etcd != nil {
		cm := newClusterMember(a, a.etcd, a.clock, host, log)
		log.Info("registering the node in etcd", "etcd", describeEtcd(cfg), "node_key", cfg.EtcdNodesPrefix+cfg.NodeName,
			"status_prefix", cfg.EtcdStatusPrefix, "lease_ttl", cfg.EtcdLeaseTTL)
		g.Go(func() error { cm.lease.Run(ctx); return nil })
		g.Go(func() error { cm.publisher.Run(ctx); return nil })
	}
	if waitUntil(ctx, a.dockerInf.Synced) {
		log.Info("docker containers listed; starting sources and controller")
		if err := a.claims.Seed(ctx); err != nil {
			log.Warn("claims' volumes not listed: claims stay Pending until a pod uses them", "err", err)
		}
		a.logContainerLogDriver(ctx)
		updates := make(chan sources.Update)
		a.srcInf.Node = admissionNode(host)
		for _, s := range a.srcs {
			if p, ok := s.(*sources.PushSource); ok {
				// From now on a write through the API returns once the
				// store holds it, with admission's verdict.
				p.SetApplier(a.srcInf.ApplyResult)
			}
		}
		g.Go(func() error { a.srcInf.Run(ctx, updates); return nil })
		for _, s := range a.srcs {
			g.Go(func() error {
				if err := s.Run(ctx, updates); err != nil {
					log.Error("source stopped", "source", s.Name(), "err", err)
				}
				return nil
			})
		}
		g.Go(func() error { a.ctrl.Run(ctx); return nil })
		g.Go(func() error { a.housekeeping(ctx); return nil })
	}
	err = g.Wait()
	log.Info("berth stopped; pods keep running")
	return err
}

// logContainerLogDriver says once, at start, when the engine's log driver
// leaves container log rotation to the daemon (neither json-file nor
// local). The runtime reads the driver again at the first create if the
// engine does not answer now.
func (a *Agent) logContainerLogDriver(ctx context.Context) {
	ld, err := a.rt.ContainerLogDriver(ctx)
	switch {
	case err != nil:
		a.log.Warn("the engine's log driver is not known yet; it is read when the first container is created", "err", err)
	case !ld.Rotated:
		a.log.Info("containers keep the engine's log driver and its options: their log rotation is the daemon's, "+
			"container_log_max_size and container_log_max_files apply to json-file and local only", "log_driver", ld.Engine)
	}
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

// objectPrefixes are the etcd prefixes of the node's ConfigMaps, Secrets
// and PersistentVolumeClaims: siblings of a pods prefix ending in "/pods/"
// (configmaps/, secrets/, persistentvolumeclaims/), else those of the
// default layout.
func objectPrefixes(podsPrefix, node string) []string {
	if base, ok := strings.CutSuffix(podsPrefix, "/pods/"); ok {
		return []string{base + "/configmaps/", base + "/secrets/", base + "/persistentvolumeclaims/"}
	}
	return cluster.ObjectPrefixes(node)
}
