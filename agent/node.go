package agent

import (
	"bufio"
	"net"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"

	"github.com/berth-dev/berth/admission"
	"github.com/berth-dev/berth/cluster"
	"github.com/berth-dev/berth/controller"
)

// nodeInfo is what berth reports about its host: the address pods see as
// status.hostIP (config node_ip, else detected) and the capacity the
// downward API falls back to for containers without limits.
func nodeInfo(configured string) controller.NodeInfo {
	n := controller.NodeInfo{IP: configured, CPUMilli: int64(goruntime.NumCPU()) * 1000, Memory: memTotal(),
		NoNegativeOOMScores: !protectSelf()}
	if n.IP == "" {
		n.IP = detectNodeIP()
	}
	return n
}

// admissionNode is the node pods must fit: h's name, labels and OS, and
// its capacity as allocatable (berth reserves nothing), as the node object
// reports them.
func admissionNode(h cluster.HostInfo) *admission.Node {
	return &admission.Node{Name: h.Name, Labels: h.Labels, OS: h.OS, CPUMilli: h.CPUMilli, Memory: h.Memory}
}

// detectNodeIP is the source address of the default route when there is
// one (no packet is sent), else the first global unicast address, else
// 127.0.0.1, as the kubelet's node address fallbacks do.
func detectNodeIP() string {
	if conn, err := net.Dial("udp4", "192.0.2.1:9"); err == nil {
		defer conn.Close()
		if a, ok := conn.LocalAddr().(*net.UDPAddr); ok && a.IP.IsGlobalUnicast() {
			return a.IP.String()
		}
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && ipn.IP.IsGlobalUnicast() {
			return ipn.IP.String()
		}
	}
	return "127.0.0.1"
}

// memTotal is MemTotal from /proc/meminfo in bytes, 0 when unreadable.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// berthOOMScoreAdj is the kubelet's default --oom-score-adj for itself.
const berthOOMScoreAdj = "-999"

// protectSelf sets berth's own oom_score_adj to the kubelet's -999 and
// reports whether the host allowed it; where it does not (no
// CAP_SYS_RESOURCE), the engine cannot give containers negative scores
// either.
func protectSelf() bool {
	return os.WriteFile("/proc/self/oom_score_adj", []byte(berthOOMScoreAdj), 0) == nil
}
