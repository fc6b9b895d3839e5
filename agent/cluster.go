package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	goruntime "runtime"
	"strings"
	"time"

	cadvisorv1 "github.com/google/cadvisor/info/v1"
	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/berth-dev/berth/cluster"
	"github.com/berth-dev/berth/config"
	"github.com/berth-dev/berth/podview"
	"github.com/berth-dev/berth/server"
	"github.com/berth-dev/berth/stats"
)

// maxPods is the node's pods capacity, the kubelet's default --max-pods.
const maxPods = 110

// clusterMember is the agent's part in a shared etcd: its lease and the
// publisher of its node key and pod statuses.
type clusterMember struct {
	lease     *cluster.Lease
	publisher *cluster.Publisher
}

// newClusterMember wires the lease and publisher of a; host is completed
// at Run (machine info needs cAdvisor started).
func newClusterMember(a *Agent, cli *clientv3.Client, clk clock.Clock, host cluster.HostInfo, log *slog.Logger) *clusterMember {
	cfg := a.cfg
	lease := cluster.NewLease(cli, cfg.EtcdLeaseTTL, clk, a.metrics, log)
	reporter := cluster.NewNodeReporter(host, nodeChecks(a), clk)
	pub := cluster.NewPublisher(cluster.PublisherConfig{
		NodeKey:        cfg.EtcdNodesPrefix + cfg.NodeName,
		StatusPrefix:   cfg.EtcdStatusPrefix,
		Interval:       cfg.EtcdStatusInterval,
		RequestTimeout: cfg.EtcdRequestTimeout,
		Clock:          clk,
		Metrics:        a.metrics,
		Log:            log,
	}, cli, lease, a.st, reporter.Node, podview.Status)
	return &clusterMember{lease: lease, publisher: pub}
}

// nodeChecks are the node's Ready condition: the engine answers and has
// been listed, every source synced.
func nodeChecks(a *Agent) []cluster.Check {
	return []cluster.Check{
		{Reason: "DockerUnreachable", Err: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			return a.dockerReady(ctx)
		}},
		{Reason: "SourcesNotSynced", Err: server.SourcesSynced(a.st)},
	}
}

// hostInfo is what the node object reports of this host; the Docker
// version is asked for when the node is rendered.
func hostInfo(a *Agent) cluster.HostInfo {
	cfg, node := a.cfg, a.node
	return cluster.HostInfo{
		Name: cfg.NodeName, Version: config.Version, CPUMilli: node.CPUMilli, Memory: node.Memory, MaxPods: maxPods,
		OS: goruntime.GOOS, Arch: goruntime.GOARCH, Kernel: kernelRelease(), Started: time.Now(), Labels: cfg.NodeLabels,
		Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: node.IP}, {Type: v1.NodeHostName, Address: cfg.NodeName}},
		RuntimeVersion: func(ctx context.Context) (string, error) {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			v, err := a.rt.Client().ServerVersion(ctx)
			if err != nil {
				return "", err
			}
			return "docker://" + v.Version, nil
		},
	}
}

// withMachineInfo takes cores and memory from cAdvisor's machine info when
// it has it, as the kubelet's capacity does.
func withMachineInfo(ctx context.Context, h cluster.HostInfo, p stats.Provider) (cluster.HostInfo, error) {
	raw, err := p.MachineInfo(ctx)
	if err != nil {
		return h, err
	}
	mi, ok := raw.(*cadvisorv1.MachineInfo)
	if !ok || mi == nil || mi.NumCores == 0 {
		return h, errors.New("cAdvisor machine info is empty")
	}
	h.CPUMilli, h.Memory = int64(mi.NumCores)*1000, int64(mi.MemoryCapacity)
	return h, nil
}

func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return strings.TrimRight(string(u.Release[:]), "\x00")
}

// describeEtcd is the log text of how the agent reaches etcd.
func describeEtcd(cfg *config.Config) string {
	ec := cfg.EtcdClient()
	s := strings.Join(ec.Endpoints, ",")
	if ec.TLS() {
		s += " (TLS)"
	}
	if ec.Username != "" {
		s += fmt.Sprintf(" as %s", ec.Username)
	}
	return s
}
