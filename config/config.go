// Package config loads berth's configuration with viper: defaults, then a
// file (--config), then BERTH_ environment variables ("." becomes "_"), then
// flags. Load validates every value and fails with the key that is wrong.
package config

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/berth-dev/berth/cluster"
	"github.com/berth-dev/berth/etcdclient"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/pause"
)

// Version is berth's release.
var Version = "0.1.0"

// Config is the validated configuration of one berth agent.
type Config struct {
	NodeName string
	// NodeIP is the address reported as the pods' hostIP; empty: detected.
	NodeIP string
	// NodeLabels are the node's labels, which pods' nodeSelector and node
	// affinity select: node_labels plus kubernetes.io/hostname, os and arch.
	NodeLabels map[string]string
	RootDir    string
	DockerHost string
	// DockerConfig is a Docker config.json whose "auths" log in for pulls.
	DockerConfig string
	// DockerRelist is the period of the safety-net relist of the engine.
	DockerRelist time.Duration

	FilePath   string
	FileRescan time.Duration

	HTTPURL      string
	HTTPInterval time.Duration
	HTTPHeaders  map[string]string

	EtcdEndpoints []string
	EtcdPrefix    string
	EtcdLegacyKey string
	// Client TLS and auth of every etcd client (source, sinks, lease).
	EtcdCAFile, EtcdCertFile, EtcdKeyFile string
	EtcdUsername, EtcdPassword            string
	// EtcdNodesPrefix holds one key per live node (<prefix><node>) under
	// the node's lease of EtcdLeaseTTL; EtcdStatusPrefix one pod status per
	// key (<prefix><ns>/<name>): a phase reached, readiness or a pod gone
	// written at once (bursts coalesced), other changes batched for up to
	// EtcdStatusInterval.
	EtcdNodesPrefix    string
	EtcdStatusPrefix   string
	EtcdLeaseTTL       time.Duration
	EtcdStatusInterval time.Duration
	EtcdCheckInterval  time.Duration
	EtcdRequestTimeout time.Duration
	// EtcdEvents writes pod events under /events/ (sources.etcd.events,
	// default true), batched into few transactions.
	EtcdEvents bool

	PushEnabled bool

	Workers int
	// MaxParallelStops is how many pods may stop containers at once.
	MaxParallelStops int
	Resync           time.Duration

	BackoffInitial time.Duration
	BackoffMax     time.Duration

	PodInfraImage string

	// ImageGCHighThreshold and ImageGCLowThreshold are percentages of the
	// disk holding the engine's images (see config/imagegc.go).
	ImageGCHighThreshold, ImageGCLowThreshold int

	// ContainerLogMaxSize (bytes) and ContainerLogMaxFiles rotate the
	// logs of every container berth creates when the engine's log driver
	// writes files, json-file or local (see config/containerlogs.go and
	// runtime.LogDriver).
	ContainerLogMaxSize  int64
	ContainerLogMaxFiles int

	ServerAddress string
	ServerPort    int
	TokenFile     string
	TLSCertFile   string
	TLSKeyFile    string
	// TLSSelfSigned serves https with a certificate berth generates under
	// root_dir/pki (see ServingCertFiles), as the kubelet self-signs one.
	TLSSelfSigned bool
	// NodeLogsDir is the directory served at /logs/ (admin only), as the
	// kubelet serves /var/log; empty serves nothing.
	NodeLogsDir string
	// MaxConnections caps the API's open connections (lowered at start to
	// half the open-file limit); MaxWatches the requests held open (watches,
	// log reads) in total and MaxWatchesPerToken those of one token.
	MaxConnections, MaxWatches, MaxWatchesPerToken int
	// MaxMutatingRequests caps the requests that change state (POST, PUT,
	// PATCH, DELETE but exec) in flight in total, MaxMutatingRequestsPerToken
	// those of one token.
	MaxMutatingRequests, MaxMutatingRequestsPerToken int

	CadvisorEnabled      bool
	CadvisorHousekeeping time.Duration

	LogLevel  string
	LogFormat string

	// PodSecurity is the Pod Security level of each source (file, http,
	// etcd, push); HostPorts the host ports the source's baseline or
	// restricted pods may claim.
	PodSecurity map[string]model.PodSecurityLevel
	HostPorts   map[string]model.PortRanges
	// AllowedUnsafeSysctls are the sysctls (or prefix globs "net.core.*")
	// beyond the kubelet's safe set that any source's pods may set.
	AllowedUnsafeSysctls []string
	// MaxContainersPerPod caps init, app and sidecar containers together.
	MaxContainersPerPod int
	// Quotas bound what each network source (http, etcd, push) may
	// declare (see config/quota.go).
	Quotas map[string]SourceQuota
	// PushTokenFile holds the tokens of push clients: they may create,
	// update, delete and read the push source's pods only.
	PushTokenFile string
	// EtcdAllowInsecureAuth permits an etcd password over http://.
	EtcdAllowInsecureAuth bool
	// Warnings are what Load found suspect but not wrong (unknown keys of
	// the config file); the caller logs them.
	Warnings []string
}

// Sources whose pods come over the network: untrusted by default.
var networkSources = []string{"http", "etcd", "push"}

// DefaultPauseImage is the pod infra image berth builds itself when absent:
// berth/pause tagged by the digest of the executable it holds (see
// pause.Default), or berth/pause:<Version>, pulled, when berth cannot
// build one.
func DefaultPauseImage() string {
	if b, err := pause.Default(); err == nil {
		return b.Ref()
	}
	return pause.Repository + ":" + Version
}

func setDefaults(v *viper.Viper) {
	host, _ := os.Hostname()
	v.SetDefault("node_name", strings.ToLower(host))
	v.SetDefault("root_dir", "/var/lib/berth")
	v.SetDefault("node_ip", "")
	v.SetDefault("node_labels", map[string]string{})
	dh := os.Getenv("DOCKER_HOST")
	if dh == "" {
		dh = "unix:///var/run/docker.sock"
	}
	v.SetDefault("docker.host", dh)
	v.SetDefault("docker.config", "")
	v.SetDefault("docker.relist", "5m")
	v.SetDefault("sources.file.path", "/etc/berth/pods")
	v.SetDefault("sources.file.rescan", "20s")
	v.SetDefault("sources.http.url", "")
	v.SetDefault("sources.http.interval", "20s")
	v.SetDefault("sources.http.headers", map[string]string{})
	v.SetDefault("sources.http.allow_host_access", false)
	v.SetDefault("sources.etcd.endpoints", []string{})
	v.SetDefault("sources.etcd.prefix", "")
	v.SetDefault("sources.etcd.legacy_key", "")
	v.SetDefault("sources.etcd.allow_host_access", false)
	v.SetDefault("sources.etcd.tls.ca_file", "")
	v.SetDefault("sources.etcd.tls.cert_file", "")
	v.SetDefault("sources.etcd.tls.key_file", "")
	v.SetDefault("sources.etcd.username", "")
	v.SetDefault("sources.etcd.password", "")
	v.SetDefault("sources.etcd.nodes_prefix", cluster.DefaultNodesPrefix)
	v.SetDefault("sources.etcd.status_prefix", "")
	v.SetDefault("sources.etcd.lease_ttl", "40s")
	v.SetDefault("sources.etcd.status_interval", "1s")
	v.SetDefault("sources.etcd.check_interval", "30s")
	v.SetDefault("sources.etcd.request_timeout", "10s")
	v.SetDefault("sources.etcd.events", true)
	v.SetDefault("sources.push.enabled", false)
	v.SetDefault("sources.push.allow_host_access", false)
	v.SetDefault("sources.push.token_file", "")
	v.SetDefault("sources.etcd.allow_insecure_auth", false)
	for _, src := range append([]string{"file"}, networkSources...) {
		v.SetDefault("sources."+src+".pod_security", "")
		v.SetDefault("sources."+src+".host_ports", model.DefaultHostPorts.String())
	}
	v.SetDefault("allowed_unsafe_sysctls", []string{})
	v.SetDefault("max_containers_per_pod", 100)
	v.SetDefault("controller.workers", 4)
	v.SetDefault("controller.max_parallel_stops", 16)
	v.SetDefault("controller.resync", "60s")
	v.SetDefault("backoff.initial", "10s")
	v.SetDefault("backoff.max", "300s")
	v.SetDefault("pod_infra_image", "")
	imageGCDefaults(v)
	containerLogDefaults(v)
	quotaDefaults(v)
	v.SetDefault("server.address", "127.0.0.1")
	v.SetDefault("server.port", 10350)
	v.SetDefault("server.token_file", "")
	v.SetDefault("server.tls.cert_file", "")
	v.SetDefault("server.tls.key_file", "")
	v.SetDefault("server.tls.self_signed", false)
	v.SetDefault("server.node_logs_dir", "/var/log")
	v.SetDefault("server.max_connections", 4096)
	v.SetDefault("server.max_watches", 1000)
	v.SetDefault("server.max_watches_per_token", 100)
	v.SetDefault("server.max_mutating_requests", 20)
	v.SetDefault("server.max_mutating_requests_per_token", 10)
	v.SetDefault("cadvisor.enabled", true)
	v.SetDefault("cadvisor.housekeeping", "10s")
	v.SetDefault("log.level", "info")
	v.SetDefault("log.format", "text")
}

// BindFlags adds the command-line flags that override the most used keys.
// Each shows its key's built-in default in --help; only a flag given on the
// command line overrides the file and the environment (Load).
func BindFlags(fs *pflag.FlagSet) {
	d := viper.New()
	setDefaults(d)
	fs.String("config", "", "configuration file (YAML, JSON or TOML)")
	fs.String("node-name", d.GetString("node_name"), "node name (config node_name)")
	fs.String("root-dir", d.GetString("root_dir"), "state directory (config root_dir)")
	fs.String("pods", d.GetString("sources.file.path"), "file or directory of pod manifests (config sources.file.path)")
	fs.String("address", d.GetString("server.address"), "API listen address (config server.address)")
	fs.Int("port", d.GetInt("server.port"), "API port (config server.port)")
	fs.String("log-level", d.GetString("log.level"), "debug, info, warn or error (config log.level)")
}

var flagKeys = map[string]string{
	"node-name": "node_name", "root-dir": "root_dir", "pods": "sources.file.path",
	"address": "server.address", "port": "server.port", "log-level": "log.level",
}

// Load reads defaults, the config file named by the "config" flag, BERTH_
// environment variables and the changed flags of fs (which may be nil).
func Load(fs *pflag.FlagSet) (*Config, error) {
	v := viper.NewWithOptions(viper.EnvKeyReplacer(envKeys{}))
	setDefaults(v)
	v.SetEnvPrefix("BERTH")
	v.AutomaticEnv()
	var warns []string
	if fs != nil {
		if f := fs.Lookup("config"); f != nil && f.Value.String() != "" {
			v.SetConfigFile(f.Value.String())
			if err := v.ReadInConfig(); err != nil {
				return nil, fmt.Errorf("config file %s: %w", f.Value.String(), err)
			}
			warns = unknownKeys(f.Value.String())
		}
		for flag, key := range flagKeys {
			if f := fs.Lookup(flag); f != nil && f.Changed {
				if err := v.BindPFlag(key, f); err != nil {
					return nil, err
				}
			}
		}
	}
	c, err := fromViper(v)
	if c != nil {
		c.Warnings = warns
	}
	return c, err
}

// envKeys names a key's BERTH_ variable ("." becomes "_"). BERTH_SERVER is
// the client commands' server URL, not the server section: viper would see
// every server.* key as hidden by it, so the agent never reads it.
type envKeys struct{}

func (envKeys) Replace(s string) string {
	if s == "BERTH_SERVER" {
		return ""
	}
	return strings.ReplaceAll(s, ".", "_")
}

type parser struct {
	v    *viper.Viper
	errs []string
}

func (p *parser) duration(key string, min time.Duration) time.Duration {
	raw := p.v.GetString(key)
	d, err := time.ParseDuration(raw)
	if err != nil {
		p.errs = append(p.errs, fmt.Sprintf("%s: %q is not a duration (like 10s or 500ms)", key, raw))
		return 0
	}
	if d < min {
		p.errs = append(p.errs, fmt.Sprintf("%s: %s is below the minimum %s", key, d, min))
	}
	return d
}

func (p *parser) integer(key string, min, max int) int {
	raw := p.v.GetString(key)
	var n int
	if _, err := fmt.Sscanf(raw, "%d", &n); err != nil || fmt.Sprint(n) != strings.TrimSpace(raw) {
		p.errs = append(p.errs, fmt.Sprintf("%s: %q is not an integer", key, raw))
		return 0
	}
	if n < min || n > max {
		p.errs = append(p.errs, fmt.Sprintf("%s: %d is outside %d..%d", key, n, min, max))
	}
	return n
}

func (p *parser) boolean(key string) bool {
	raw := strings.ToLower(p.v.GetString(key))
	switch raw {
	case "true", "1", "yes":
		return true
	case "false", "0", "no", "":
		return false
	}
	p.errs = append(p.errs, fmt.Sprintf("%s: %q is not a boolean", key, raw))
	return false
}

func (p *parser) oneOf(key string, allowed ...string) string {
	raw := strings.ToLower(p.v.GetString(key))
	for _, a := range allowed {
		if raw == a {
			return raw
		}
	}
	p.errs = append(p.errs, fmt.Sprintf("%s: %q is not one of %s", key, raw, strings.Join(allowed, ", ")))
	return raw
}

// podSecurity reads each source's pod_security (file: privileged, network
// sources: baseline), its alias allow_host_access: true (= privileged; a
// contradicting explicit level is an error) and host_ports.
func (p *parser) podSecurity(c *Config) {
	for _, src := range append([]string{"file"}, networkSources...) {
		key := "sources." + src + ".pod_security"
		level := model.LevelBaseline
		if src == "file" {
			level = model.LevelPrivileged
		}
		raw := p.v.GetString(key)
		if raw != "" {
			l, err := model.ParsePodSecurityLevel(raw)
			if err != nil {
				p.errs = append(p.errs, key+": "+err.Error())
			}
			level = l
		}
		if src != "file" && p.boolean("sources."+src+".allow_host_access") {
			if raw != "" && level != model.LevelPrivileged {
				p.errs = append(p.errs, fmt.Sprintf("sources.%s.allow_host_access: true means pod_security privileged, but %s is %q", src, key, raw))
			}
			level = model.LevelPrivileged
		}
		c.PodSecurity[src] = level
		hk := "sources." + src + ".host_ports"
		ports, err := model.ParsePortRanges(p.v.GetString(hk))
		if err != nil {
			p.errs = append(p.errs, hk+": "+err.Error())
		}
		c.HostPorts[src] = ports
	}
	for _, s := range c.AllowedUnsafeSysctls {
		if s == "" || strings.Contains(strings.TrimSuffix(s, "*"), "*") {
			p.errs = append(p.errs, fmt.Sprintf("allowed_unsafe_sysctls: %q must be a sysctl name or a prefix ending in *", s))
		}
	}
}

func fromViper(v *viper.Viper) (*Config, error) {
	p := &parser{v: v}
	c := &Config{
		NodeName:              strings.TrimSpace(v.GetString("node_name")),
		NodeIP:                strings.TrimSpace(v.GetString("node_ip")),
		RootDir:               v.GetString("root_dir"),
		DockerHost:            v.GetString("docker.host"),
		DockerConfig:          v.GetString("docker.config"),
		DockerRelist:          p.duration("docker.relist", time.Second),
		FilePath:              v.GetString("sources.file.path"),
		FileRescan:            p.duration("sources.file.rescan", 100*time.Millisecond),
		HTTPURL:               v.GetString("sources.http.url"),
		HTTPInterval:          p.duration("sources.http.interval", 100*time.Millisecond),
		HTTPHeaders:           v.GetStringMapString("sources.http.headers"),
		EtcdEndpoints:         v.GetStringSlice("sources.etcd.endpoints"),
		EtcdPrefix:            v.GetString("sources.etcd.prefix"),
		EtcdLegacyKey:         v.GetString("sources.etcd.legacy_key"),
		EtcdCAFile:            v.GetString("sources.etcd.tls.ca_file"),
		EtcdCertFile:          v.GetString("sources.etcd.tls.cert_file"),
		EtcdKeyFile:           v.GetString("sources.etcd.tls.key_file"),
		EtcdUsername:          v.GetString("sources.etcd.username"),
		EtcdPassword:          v.GetString("sources.etcd.password"),
		EtcdNodesPrefix:       v.GetString("sources.etcd.nodes_prefix"),
		EtcdStatusPrefix:      v.GetString("sources.etcd.status_prefix"),
		EtcdLeaseTTL:          p.duration("sources.etcd.lease_ttl", 2*time.Second),
		EtcdStatusInterval:    p.duration("sources.etcd.status_interval", 10*time.Millisecond),
		EtcdCheckInterval:     p.duration("sources.etcd.check_interval", 100*time.Millisecond),
		EtcdRequestTimeout:    p.duration("sources.etcd.request_timeout", 100*time.Millisecond),
		EtcdEvents:            p.boolean("sources.etcd.events"),
		PushEnabled:           p.boolean("sources.push.enabled"),
		Workers:               p.integer("controller.workers", 1, 256),
		MaxParallelStops:      p.integer("controller.max_parallel_stops", 1, 4096),
		Resync:                p.duration("controller.resync", time.Second),
		BackoffInitial:        p.duration("backoff.initial", time.Millisecond),
		BackoffMax:            p.duration("backoff.max", time.Millisecond),
		PodInfraImage:         v.GetString("pod_infra_image"),
		ServerAddress:         v.GetString("server.address"),
		ServerPort:            p.integer("server.port", 0, 65535),
		TokenFile:             v.GetString("server.token_file"),
		TLSCertFile:           v.GetString("server.tls.cert_file"),
		TLSKeyFile:            v.GetString("server.tls.key_file"),
		TLSSelfSigned:         p.boolean("server.tls.self_signed"),
		NodeLogsDir:           v.GetString("server.node_logs_dir"),
		MaxConnections:        p.integer("server.max_connections", 16, 1<<20),
		MaxWatches:            p.integer("server.max_watches", 1, 1<<20),
		MaxWatchesPerToken:    p.integer("server.max_watches_per_token", 1, 1<<20),
		CadvisorEnabled:       p.boolean("cadvisor.enabled"),
		CadvisorHousekeeping:  p.duration("cadvisor.housekeeping", time.Second),
		LogLevel:              p.oneOf("log.level", "debug", "info", "warn", "error"),
		LogFormat:             p.oneOf("log.format", "text", "json"),
		AllowedUnsafeSysctls:  v.GetStringSlice("allowed_unsafe_sysctls"),
		MaxContainersPerPod:   p.integer("max_containers_per_pod", 1, 10000),
		PushTokenFile:         v.GetString("sources.push.token_file"),
		EtcdAllowInsecureAuth: p.boolean("sources.etcd.allow_insecure_auth"),
		PodSecurity:           map[string]model.PodSecurityLevel{},
		HostPorts:             map[string]model.PortRanges{},
	}
	p.podSecurity(c)
	p.imageGC(c)
	p.containerLogs(c)
	p.quotas(c)
	c.MaxMutatingRequests = p.integer("server.max_mutating_requests", 1, 1<<20)
	c.MaxMutatingRequestsPerToken = p.integer("server.max_mutating_requests_per_token", 1, 1<<20)
	c.NodeLabels = p.nodeLabels(c.NodeName)
	c.EtcdEndpoints = etcdclient.SplitEndpoints(c.EtcdEndpoints...)
	if c.NodeName == "" {
		p.errs = append(p.errs, "node_name: must not be empty")
	}
	if c.NodeIP != "" && net.ParseIP(c.NodeIP) == nil {
		p.errs = append(p.errs, fmt.Sprintf("node_ip: %q is not an IP address", c.NodeIP))
	}
	if c.EtcdPrefix == "" {
		c.EtcdPrefix = cluster.PodsPrefix(c.NodeName)
	}
	if c.EtcdLegacyKey == "" {
		c.EtcdLegacyKey = "/registry/hosts/" + c.NodeName + "/kubelet"
	}
	if c.EtcdStatusPrefix == "" {
		c.EtcdStatusPrefix = cluster.StatusPrefix(c.NodeName)
	}
	for key, prefix := range map[string]string{"sources.etcd.nodes_prefix": c.EtcdNodesPrefix, "sources.etcd.status_prefix": c.EtcdStatusPrefix} {
		if !strings.HasPrefix(prefix, "/") || !strings.HasSuffix(prefix, "/") {
			p.errs = append(p.errs, fmt.Sprintf("%s: %q must start and end with /", key, prefix))
		}
	}
	if strings.HasPrefix(c.EtcdStatusPrefix, c.EtcdPrefix) || strings.HasPrefix(c.EtcdPrefix, c.EtcdStatusPrefix) {
		p.errs = append(p.errs, fmt.Sprintf("sources.etcd.status_prefix: %q overlaps sources.etcd.prefix %q", c.EtcdStatusPrefix, c.EtcdPrefix))
	}
	if err := c.EtcdClient().Validate(func(field string) string { return "sources.etcd." + field }); err != nil {
		p.errs = append(p.errs, err.Error())
	}
	if c.PodInfraImage == "" {
		c.PodInfraImage = DefaultPauseImage()
	}
	if c.BackoffMax < c.BackoffInitial {
		p.errs = append(p.errs, fmt.Sprintf("backoff.max: %s is below backoff.initial %s", c.BackoffMax, c.BackoffInitial))
	}
	if c.RootDir == "" || !strings.HasPrefix(c.RootDir, "/") {
		p.errs = append(p.errs, fmt.Sprintf("root_dir: %q must be an absolute path", c.RootDir))
	}
	if c.ServerAddress != "" && net.ParseIP(c.ServerAddress) == nil && c.ServerAddress != "localhost" {
		p.errs = append(p.errs, fmt.Sprintf("server.address: %q is not an IP address", c.ServerAddress))
	}
	if c.NodeLogsDir != "" && !filepath.IsAbs(c.NodeLogsDir) {
		p.errs = append(p.errs, fmt.Sprintf("server.node_logs_dir: %q is not an absolute path", c.NodeLogsDir))
	}
	if c.MaxWatchesPerToken > c.MaxWatches {
		p.errs = append(p.errs, fmt.Sprintf("server.max_watches_per_token: %d is above server.max_watches %d", c.MaxWatchesPerToken, c.MaxWatches))
	}
	if c.MaxMutatingRequestsPerToken > c.MaxMutatingRequests {
		p.errs = append(p.errs, fmt.Sprintf("server.max_mutating_requests_per_token: %d is above server.max_mutating_requests %d", c.MaxMutatingRequestsPerToken, c.MaxMutatingRequests))
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		p.errs = append(p.errs, "server.tls: cert_file and key_file must be set together")
	}
	if c.TLSSelfSigned && (c.TLSCertFile != "" || c.TLSKeyFile != "") {
		p.errs = append(p.errs, "server.tls.self_signed: true and server.tls.cert_file/key_file exclude each other: berth either generates its certificate or serves the one given; drop one")
	}
	if c.HTTPURL != "" && !strings.HasPrefix(c.HTTPURL, "http://") && !strings.HasPrefix(c.HTTPURL, "https://") {
		p.errs = append(p.errs, fmt.Sprintf("sources.http.url: %q must be an http:// or https:// URL", c.HTTPURL))
	}
	if c.PushEnabled && c.PushTokenFile == "" && c.TokenFile == "" {
		p.errs = append(p.errs, "sources.push.token_file: the push source needs a token file (or server.token_file): an untokened push would be anonymous")
	}
	if len(p.errs) > 0 {
		return nil, fmt.Errorf("invalid configuration:\n  %s", strings.Join(p.errs, "\n  "))
	}
	return c, nil
}

// EtcdClient is the client configuration every etcd user of berth shares.
func (c *Config) EtcdClient() etcdclient.Config {
	return etcdclient.Config{Endpoints: c.EtcdEndpoints, CAFile: c.EtcdCAFile, CertFile: c.EtcdCertFile, KeyFile: c.EtcdKeyFile,
		Username: c.EtcdUsername, Password: c.EtcdPassword, AllowInsecureAuth: c.EtcdAllowInsecureAuth, DialTimeout: 5 * time.Second}
}

// Loopback reports whether the API address only accepts local connections.
func (c *Config) Loopback() bool {
	if c.ServerAddress == "localhost" {
		return true
	}
	ip := net.ParseIP(c.ServerAddress)
	return ip != nil && ip.IsLoopback()
}
