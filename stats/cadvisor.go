package stats

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/cadvisor/cache/memory"
	cadvisorcontainer "github.com/google/cadvisor/container"
	dockerplugin "github.com/google/cadvisor/container/docker"
	_ "github.com/google/cadvisor/container/docker/install" // registers the Docker plugin
	cadvisorv1 "github.com/google/cadvisor/info/v1"
	cadvisorv2 "github.com/google/cadvisor/info/v2"
	"github.com/google/cadvisor/manager"
	cadvisormetrics "github.com/google/cadvisor/metrics"
	"github.com/google/cadvisor/utils/sysfs"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"

	berthrt "github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

// Options configure the cAdvisor provider.
type Options struct {
	// NodeName is reported as node.nodeName; when set, containers labelled
	// for another node (io.berth.node) are left out of the pods.
	NodeName string
	// Housekeeping is the interval between two samples of a container
	// (config cadvisor.housekeeping); 0 means 10 s. cAdvisor may stretch it
	// up to 1.5× for containers whose usage does not change.
	Housekeeping time.Duration
	// DockerHost is the engine endpoint (config docker.host); empty means
	// unix:///var/run/docker.sock. TLS endpoints are not supported.
	DockerHost string
	// RootDir is the directory whose filesystem is reported as node.fs
	// (config root_dir); "/" when empty or missing.
	RootDir string
	// Store, optional, fills in pod UIDs that container labels lack.
	Store *store.Store
	// Logger, optional, receives berth's own messages (cAdvisor logs
	// through klog).
	Logger *slog.Logger
}

// statsCacheDuration is how long cAdvisor keeps samples in memory.
const statsCacheDuration = 2 * time.Minute

// includedMetrics is what berth asks cAdvisor to collect: enough for the
// summary (cpu, memory, network, disk usage) plus block I/O for
// /metrics/cadvisor. Per-process, per-CPU, TCP/UDP, perf, resctrl and
// hugetlb collection are left out (they are costly or unused).
var includedMetrics = cadvisorcontainer.MetricSet{
	cadvisorcontainer.CpuUsageMetrics:     struct{}{},
	cadvisorcontainer.MemoryUsageMetrics:  struct{}{},
	cadvisorcontainer.NetworkUsageMetrics: struct{}{},
	cadvisorcontainer.DiskUsageMetrics:    struct{}{},
	cadvisorcontainer.DiskIOMetrics:       struct{}{},
}

// cAdvisor keeps its container factories and Docker client in package
// globals, and its per-container goroutines survive Manager.Stop: one
// started manager per process.
var processClaimed atomic.Bool

// Cadvisor is the Provider backed by an embedded cAdvisor manager watching
// the cgroups of the machine and the Docker engine's containers.
type Cadvisor struct {
	opts      Options
	mgr       manager.Manager
	collector prometheus.Collector
	log       *slog.Logger

	mu      sync.Mutex
	started bool
}

var _ Provider = (*Cadvisor)(nil)

// NewCadvisor prepares cAdvisor: it checks the Docker engine, detects the
// machine and the cgroup layout. It fails when cgroups, /proc or /sys, or
// the engine cannot be used; fall back to Unavailable{Reason: err.Error()}
// (or use Open, which does).
func NewCadvisor(o Options) (*Cadvisor, error) {
	if o.Housekeeping <= 0 {
		o.Housekeeping = 10 * time.Second
	}
	if o.DockerHost == "" {
		o.DockerHost = "unix:///var/run/docker.sock"
	}
	if o.RootDir == "" {
		o.RootDir = "/"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if processClaimed.Load() {
		return nil, errors.New("cAdvisor: already running in this process")
	}

	// cAdvisor is configured through its flags (package globals). Keep no
	// event history (berth has its own events) and sample every
	// Housekeeping, as the kubelet does.
	*manager.HousekeepingInterval = o.Housekeeping
	for name, value := range map[string]string{
		"event_storage_event_limit": "default=0",
		"event_storage_age_limit":   "default=0",
	} {
		if f := flag.Lookup(name); f != nil {
			_ = f.Value.Set(value)
		}
	}
	// The plugin's Docker client is created once per process from this.
	*dockerplugin.ArgDockerEndpoint = o.DockerHost
	if _, err := dockerplugin.ValidateInfo(dockerplugin.Info, dockerplugin.VersionString); err != nil {
		return nil, fmt.Errorf("cAdvisor: Docker engine at %s: %w", o.DockerHost, err)
	}

	maxInterval := o.Housekeeping * 3 / 2
	allowDynamic := true
	mgr, err := manager.New(
		memory.New(statsCacheDuration, nil),
		sysfs.NewRealSysFs(),
		manager.HousekeepingConfig{Interval: &maxInterval, AllowDynamic: &allowDynamic},
		includedMetrics,
		http.DefaultClient,
		// Raw cgroups: only the root "/" (always accepted) for node stats;
		// Docker containers are handled by the Docker factory.
		nil,
		nil, // no environment variables exported
		"",  // no perf events
		0,   // no resctrl
	)
	if err != nil {
		return nil, fmt.Errorf("cAdvisor: %w", err)
	}
	c := &Cadvisor{opts: o, mgr: mgr, log: o.Logger}
	c.collector = multiCollector{
		cadvisormetrics.NewPrometheusCollector(mgr, containerLabels, includedMetrics, clock.RealClock{},
			cadvisorv2.RequestOptions{IdType: cadvisorv2.TypeName, Count: 1, Recursive: true}),
		cadvisormetrics.NewPrometheusMachineCollector(mgr, includedMetrics),
	}
	return c, nil
}

// Start starts cAdvisor's watchers and housekeeping and returns; they stop
// when ctx ends. It fails when the cgroup hierarchy cannot be watched.
func (c *Cadvisor) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return nil
	}
	if !processClaimed.CompareAndSwap(false, true) {
		return errors.New("cAdvisor: already running in this process")
	}
	if err := c.mgr.Start(); err != nil {
		cadvisorcontainer.ClearContainerHandlerFactories()
		processClaimed.Store(false)
		return fmt.Errorf("cAdvisor: start: %w", err)
	}
	c.started = true
	go func() {
		<-ctx.Done()
		if err := c.mgr.Stop(); err != nil {
			c.log.Warn("cAdvisor stop", "err", err)
		}
	}()
	return nil
}

func (c *Cadvisor) ready() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		return fmt.Errorf("%w: cAdvisor not started yet", ErrUnavailable)
	}
	return nil
}

// Summary reads the latest samples of the root cgroup and of every Docker
// container, plus the filesystem of RootDir.
func (c *Cadvisor) Summary(ctx context.Context) (*Summary, error) {
	if err := c.ready(); err != nil {
		return nil, err
	}
	infos, err := c.mgr.GetContainerInfoV2("/", cadvisorv2.RequestOptions{
		IdType: cadvisorv2.TypeName, Count: 2, Recursive: true,
	})
	if err != nil {
		if _, ok := infos["/"]; !ok {
			return nil, fmt.Errorf("cAdvisor: container info: %w", err)
		}
		// Partial failure: a container went away mid-request; report the rest.
		c.log.Debug("cAdvisor: partial container info", "err", err)
	}
	in := summaryInput{NodeName: c.opts.NodeName, Infos: infos, Store: c.opts.Store}
	if mi, err := c.mgr.GetMachineInfo(); err == nil {
		in.MemoryCapacity = mi.MemoryCapacity
	}
	dir := c.opts.RootDir
	if _, err := os.Stat(dir); err != nil {
		dir = "/"
	}
	if fs, err := c.mgr.GetDirFsInfo(dir); err == nil {
		in.RootFs = &fs
	} else {
		c.log.Debug("cAdvisor: root_dir filesystem", "dir", dir, "err", err)
	}
	return buildSummary(in), nil
}

// MachineInfo returns cAdvisor's *v1.MachineInfo.
func (c *Cadvisor) MachineInfo(ctx context.Context) (any, error) {
	if err := c.ready(); err != nil {
		return nil, err
	}
	mi, err := c.mgr.GetMachineInfo()
	if err != nil {
		return nil, fmt.Errorf("cAdvisor: machine info: %w", err)
	}
	return mi, nil
}

// Collector returns cAdvisor's container_* and machine_* collectors.
func (c *Cadvisor) Collector() prometheus.Collector { return c.collector }

// containerLabels gives every cAdvisor series the same label names (a
// Prometheus requirement) the kubelet uses: id (cgroup), name (Docker name),
// image, and the berth pod's namespace, pod and container.
func containerLabels(ci *cadvisorv1.ContainerInfo) map[string]string {
	set := map[string]string{
		cadvisormetrics.LabelID:    ci.Name,
		cadvisormetrics.LabelName:  "",
		cadvisormetrics.LabelImage: ci.Spec.Image,
		"namespace":                "",
		"pod":                      "",
		"container":                "",
	}
	if len(ci.Aliases) > 0 {
		set[cadvisormetrics.LabelName] = ci.Aliases[0]
	}
	if l := ci.Spec.Labels; l[berthrt.LabelManaged] == "true" {
		set["namespace"] = l[berthrt.LabelPodNamespace]
		set["pod"] = l[berthrt.LabelPodName]
		set["container"] = l[berthrt.LabelContainerName]
	}
	return set
}

// multiCollector is several collectors as one.
type multiCollector []prometheus.Collector

func (m multiCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m {
		c.Describe(ch)
	}
}

func (m multiCollector) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m {
		c.Collect(ch)
	}
}
