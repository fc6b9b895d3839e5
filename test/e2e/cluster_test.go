package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/internal/testutil"
)

// clusterTTL is the node lease TTL of these tests (40 s in production).
const clusterTTL = 6 * time.Second

// clusterEnv points a berth at etcd endpoints with the tests' timings.
func clusterEnv(endpoints string) []string {
	return []string{
		"BERTH_SOURCES_ETCD_ENDPOINTS=" + endpoints,
		"BERTH_SOURCES_ETCD_LEASE_TTL=" + clusterTTL.String(),
		"BERTH_SOURCES_ETCD_CHECK_INTERVAL=1s",
		"BERTH_SOURCES_ETCD_REQUEST_TIMEOUT=3s",
	}
}

// statusOf reads a pod's status key; ok is false when there is none.
func statusOf(t *testing.T, cli *clientv3.Client, node, pod string) (v1.PodStatus, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "/registry/hosts/"+node+"/status/default/"+pod)
	var s v1.PodStatus
	if err != nil || len(resp.Kvs) == 0 {
		return s, false
	}
	if err := json.Unmarshal(resp.Kvs[0].Value, &s); err != nil {
		t.Fatalf("status key of %s/%s: %v", node, pod, err)
	}
	return s, true
}

func waitStatusRunning(t *testing.T, cli *clientv3.Client, node, pod string, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, "status key of "+node+"/"+pod+" Running", func() (bool, string) {
		s, ok := statusOf(t, cli, node, pod)
		return ok && s.Phase == v1.PodRunning, fmt.Sprintf("present %v, phase %q", ok, s.Phase)
	})
}

func nodeKeyExists(t *testing.T, cli *clientv3.Client, node string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "/registry/nodes/"+node, clientv3.WithCountOnly())
	return err == nil && resp.Count == 1
}

// TestClusterOfThree runs three berths against a three-member etcd: pods
// applied to each node run there only, the cluster-wide CLI sees all of
// them, a killed agent's node key expires within its TTL while its
// containers keep running, and the others go on through the loss of the
// etcd leader.
func TestClusterOfThree(t *testing.T) {
	need(t)
	c := testutil.StartEtcdCluster(t, 3)
	eps := strings.Join(c.Endpoints(), ",")
	cli := c.Client()
	var bs []*Berth
	for range 3 {
		bs = append(bs, startBerth(t, Options{Env: clusterEnv(eps)}))
	}
	dir := t.TempDir()
	etcdArgs := func(args ...string) []string { return append(args, "--etcd-endpoints", eps) }
	for i, b := range bs {
		f := filepath.Join(dir, fmt.Sprintf("web%d.yaml", i))
		if err := os.WriteFile(f, []byte(webPod(fmt.Sprintf("web%d", i), freePort(t), "side")), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, errOut, err := berthCLI(t, etcdArgs("apply", "-f", f, "--node", b.Node)...); err != nil {
			t.Fatalf("berth apply: %v\n%s%s", err, out, errOut)
		}
	}
	for i, b := range bs {
		waitPodRunning(t, b.Node, fmt.Sprintf("web%d", i), "web", "side")
		waitStatusRunning(t, cli, b.Node, fmt.Sprintf("web%d", i), waitLong)
	}
	// Each pod runs on its node only.
	for i := range bs {
		for j, other := range bs {
			if j != i && len(podContainers(t, other.Node, fmt.Sprintf("web%d", i))) != 0 {
				t.Errorf("pod web%d applied to %s has containers of node %s", i, bs[i].Node, other.Node)
			}
		}
	}
	// The invalid manifest is refused before anything is written.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(sleeper("bad"), "image:", "imagex:", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := berthCLI(t, etcdArgs("apply", "-f", bad, "--node", bs[0].Node)...); err == nil || !strings.Contains(errOut, "bad.yaml") {
		t.Errorf("apply of an invalid manifest: err %v, stderr %q (want the file named)", err, errOut)
	}
	if _, ok := statusOf(t, cli, bs[0].Node, "bad"); ok {
		t.Error("the invalid pod got a status")
	}

	waitFor(t, waitLong, "get pods --all-nodes lists three Running pods", func() (bool, string) {
		out, errOut, err := berthCLI(t, etcdArgs("get", "pods", "--all-nodes")...)
		if err != nil {
			return false, errOut
		}
		n := 0
		for i, b := range bs {
			for _, line := range strings.Split(out, "\n") {
				f := strings.Fields(line)
				if len(f) >= 5 && f[0] == b.Node && f[2] == fmt.Sprintf("web%d", i) && f[3] == "2/2" && f[4] == "Running" {
					n++
				}
			}
		}
		return n == 3 && strings.HasPrefix(out, "NODE "), out
	})
	out, errOut, err := berthCLI(t, etcdArgs("get", "nodes")...)
	if err != nil {
		t.Fatalf("get nodes: %v %s", err, errOut)
	}
	for _, b := range bs {
		if !strings.Contains(out, b.Node+" ") || strings.Count(out, " Ready ") < 3 {
			t.Fatalf("get nodes does not show %s Ready:\n%s", b.Node, out)
		}
	}

	// kill -9 one agent: its node key expires within the TTL, its
	// containers keep running.
	dead := bs[2]
	deadIDs := waitPodRunning(t, dead.Node, "web2", "web", "side")
	killed := time.Now()
	dead.Kill(t)
	waitFor(t, clusterTTL+3*time.Second, "the killed node's key to expire", func() (bool, string) {
		return !nodeKeyExists(t, cli, dead.Node), "still there"
	})
	t.Logf("killed node's key gone %.1fs after kill -9 (TTL %s)", time.Since(killed).Seconds(), clusterTTL)
	if _, ok := statusOf(t, cli, dead.Node, "web2"); ok {
		t.Error("the killed node's pod status outlived its lease")
	}
	assertStable(t, dead.Node, "web2", deadIDs, time.Second)

	// Lose the etcd leader: the other agents keep their leases and their
	// statuses resume.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	leader, err := c.Leader(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	c.StopMember(leader)
	stopped := time.Now()
	for i, b := range bs[:2] {
		f := filepath.Join(dir, fmt.Sprintf("after%d.yaml", i))
		if err := os.WriteFile(f, []byte(sleeper(fmt.Sprintf("after%d", i))), 0o644); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "apply through the remaining members", func() (bool, string) {
			_, errOut, err := berthCLI(t, etcdArgs("apply", "-f", f, "--node", b.Node, "--etcd-timeout", "5s")...)
			return err == nil, errOut
		})
	}
	for i, b := range bs[:2] {
		waitStatusRunning(t, cli, b.Node, fmt.Sprintf("after%d", i), 30*time.Second)
	}
	t.Logf("statuses of new pods Running %.1fs after the leader (member %d) stopped", time.Since(stopped).Seconds(), leader)
	time.Sleep(clusterTTL)
	for _, b := range bs[:2] {
		if !nodeKeyExists(t, cli, b.Node) {
			t.Errorf("node %s lost its key after the etcd leader stopped", b.Node)
		}
	}

	// A clean stop (SIGTERM) revokes the lease: the node key goes at once.
	bs[1].Stop(t)
	if nodeKeyExists(t, cli, bs[1].Node) {
		t.Errorf("node %s still registered right after a clean stop", bs[1].Node)
	}

	// delete pod: the node stops it and its status goes.
	if out, errOut, err := berthCLI(t, etcdArgs("delete", "pod", "web0", "--node", bs[0].Node)...); err != nil {
		t.Fatalf("delete pod: %v %s%s", err, out, errOut)
	}
	waitPodGone(t, bs[0].Node, "web0")
	waitFor(t, 20*time.Second, "status key of a deleted pod gone", func() (bool, string) {
		_, ok := statusOf(t, cli, bs[0].Node, "web0")
		return !ok, "still there"
	})
	if _, errOut, err := berthCLI(t, etcdArgs("delete", "pod", "web0", "--node", bs[0].Node)...); err == nil || !strings.Contains(errOut, "not found") {
		t.Errorf("second delete: err %v, stderr %q", err, errOut)
	}
}

// TestWipedEtcdRelists: etcd comes back with its data dir wiped and
// restored with only one of the node's two pods, at a lower revision (with
// the same member flags it keeps its cluster ID). berth notices the
// revision went back, relists through its startup path and only then
// removes the pod the new cluster lacks; the other pod is never touched,
// and statuses go to the new cluster.
func TestWipedEtcdRelists(t *testing.T) {
	need(t)
	e := startEtcd(t)
	node := "e2e-" + runID + "-" + randHex(3)
	prefix := "/registry/hosts/" + node + "/pods/default/"
	e.Put(prefix+"keep", sleeper("keep"))
	e.Put(prefix+"drop", sleeper("drop"))
	b := startBerth(t, Options{Node: node, Env: clusterEnv(e.ClientURL)})
	keep := waitPodRunning(t, node, "keep", "app")
	waitPodRunning(t, node, "drop", "app")
	waitStatusRunning(t, e.Client(), node, "keep", waitLong)

	// Restore a backup holding only "keep" into a fresh data dir, through a
	// side URL berth does not know, then serve it on the usual one.
	e.Wipe()
	side := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	e.StartOn(side)
	sc, err := clientv3.New(clientv3.Config{Endpoints: []string{side}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, err = sc.Put(ctx, prefix+"keep", sleeper("keep"))
	cancel()
	sc.Close()
	if err != nil {
		t.Fatal(err)
	}
	e.Stop()
	e.Start()

	waitPodGone(t, node, "drop")
	assertStable(t, node, "keep", keep, time.Second)
	waitStatusRunning(t, e.Client(), node, "keep", waitLong)
	log := b.LogText()
	if !strings.Contains(log, "etcd cluster replaced") || !strings.Contains(log, "revision went back") {
		t.Errorf("berth's log does not say the cluster changed:\n%s", tail(log, 3000))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestEtcdTLSAndAuth: a berth configured with the documented TLS and auth
// keys runs a pod from an etcd that demands a client certificate and a
// password, registers its node and writes the pod's status there.
func TestEtcdTLSAndAuth(t *testing.T) {
	need(t)
	ca := testutil.NewTestCA(t, t.TempDir())
	e := testutil.StartEtcdTLS(t, ca)
	testutil.EnableAuth(t, e.TLSClient(ca, "", ""), "berth", "s3cret")
	cli := e.TLSClient(ca, "berth", "s3cret")
	node := "e2e-" + runID + "-" + randHex(3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_, err := cli.Put(ctx, "/registry/hosts/"+node+"/pods/default/secure", sleeper("secure"))
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	b := startBerth(t, Options{Node: node, Env: append(clusterEnv(e.ClientURL),
		"BERTH_SOURCES_ETCD_TLS_CA_FILE="+ca.CAFile,
		"BERTH_SOURCES_ETCD_TLS_CERT_FILE="+ca.ClientCert,
		"BERTH_SOURCES_ETCD_TLS_KEY_FILE="+ca.ClientKey,
		"BERTH_SOURCES_ETCD_USERNAME=berth",
		"BERTH_SOURCES_ETCD_PASSWORD=s3cret",
	)})
	waitPodRunning(t, node, "secure", "app")
	waitStatusRunning(t, cli, node, "secure", waitLong)
	if !nodeKeyExists(t, cli, node) {
		t.Fatal("no node key")
	}
	metricAtLeast(t, b, `berth_etcd_request_duration_seconds_count{operation="txn"}`, 1)
	metricAtLeast(t, b, `berth_etcd_lease_renewals_total{result="success"}`, 1)
}
