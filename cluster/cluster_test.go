package cluster

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/etcdclient"
	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

// countingObserver counts etcd requests by operation.
type countingObserver struct {
	mu  sync.Mutex
	ops map[string]int
}

func (o *countingObserver) EtcdRequest(op string, _ time.Duration, _ error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ops == nil {
		o.ops = map[string]int{}
	}
	o.ops[op]++
}

func (o *countingObserver) count(op string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ops[op]
}

type countingMetrics struct {
	renewed, failed, writes atomic.Int64
}

func (m *countingMetrics) LeaseRenewed(ok bool) {
	if ok {
		m.renewed.Add(1)
	} else {
		m.failed.Add(1)
	}
}
func (m *countingMetrics) StatusWrites(n int) { m.writes.Add(int64(n)) }

func client(t *testing.T, e *testutil.Etcd, obs etcdclient.Observer) *clientv3.Client {
	t.Helper()
	cli, err := etcdclient.Config{Endpoints: []string{e.ClientURL}, Observer: obs}.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func get(t *testing.T, cli *clientv3.Client, key string) (string, int64, bool) {
	t.Helper()
	resp, err := cli.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return "", 0, false
	}
	return string(resp.Kvs[0].Value), resp.Kvs[0].Lease, true
}

func revision(t *testing.T, cli *clientv3.Client) int64 {
	t.Helper()
	resp, err := cli.Get(context.Background(), "/", clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

func testPod(name string, phase v1.PodPhase) *model.Pod {
	return &model.Pod{Key: "default/" + name, Source: "file",
		Spec:   &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: "uid-" + "name"}},
		Status: v1.PodStatus{Phase: phase}}
}

func staticNode(name string) NodeFunc {
	return func(_ context.Context, pods int) v1.Node {
		n := v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{PodsAnnotation: itoa(pods)}}}
		return n
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func statusOf(p *model.Pod) v1.PodStatus { return p.Status }

// member runs a lease and publisher for node until the test ends, or until
// the returned stop is called. The publisher runs on clk (nil: the real
// clock); the lease always on the real clock, as etcd expires it in real time.
func member(t *testing.T, cli *clientv3.Client, node string, st StateReader, ttl, interval time.Duration, clk clock.Clock, m Metrics) (*Lease, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	lease := NewLease(cli, ttl, nil, m, nil)
	pub := NewPublisher(PublisherConfig{NodeKey: DefaultNodesPrefix + node, StatusPrefix: StatusPrefix(node),
		Interval: interval, Clock: clk, Metrics: m}, cli, lease, st, staticNode(node), statusOf)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); lease.Run(ctx) }()
	go func() { defer wg.Done(); pub.Run(ctx) }()
	stop := func() { cancel(); wg.Wait() }
	t.Cleanup(stop)
	return lease, stop
}

// TestLeaseKeepsAndRevokes: the node key outlives its TTL while renewed,
// and goes at once when the member stops (revoke), not a TTL later.
func TestLeaseKeepsAndRevokes(t *testing.T) {
	e := testutil.StartEtcd(t)
	cli := client(t, e, nil)
	st, err := store.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &countingMetrics{}
	const ttl = 2 * time.Second
	_, stop := member(t, cli, "n1", st, ttl, 10*time.Millisecond, nil, m)
	eventually(t, 5*time.Second, "node key", func() bool { _, _, ok := get(t, cli, DefaultNodesPrefix+"n1"); return ok })
	// etcd expires leases on its own real clock, so the key must be seen
	// to outlive its TTL in real time: until five renewals and 1.5 TTLs.
	appeared := time.Now()
	for deadline := appeared.Add(5 * time.Second); (m.renewed.Load() < 5 || time.Since(appeared) <= ttl*3/2) &&
		time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
	}
	if _, lease, ok := get(t, cli, DefaultNodesPrefix+"n1"); !ok || lease == 0 {
		t.Fatalf("node key after %s (TTL %s): present %v, lease %x", time.Since(appeared).Round(time.Millisecond), ttl, ok, lease)
	}
	if n := m.renewed.Load(); n < 5 {
		t.Errorf("%d renewals in 5 s with TTL 2 s, want at least 5 (every TTL/3)", n)
	}
	stop()
	if _, _, ok := get(t, cli, DefaultNodesPrefix+"n1"); ok {
		t.Fatal("node key still there right after a clean stop: the lease was not revoked")
	}
}

// TestLeaseLostIsReplaced: when etcd forgets the lease (revoked behind
// berth's back, as a restored cluster would), a new one is granted and the
// node key and statuses are written again under it.
func TestLeaseLostIsReplaced(t *testing.T) {
	e := testutil.StartEtcd(t)
	cli := client(t, e, nil)
	st, _ := store.New(nil)
	if err := st.UpsertPod(testPod("a", v1.PodRunning)); err != nil {
		t.Fatal(err)
	}
	lease, _ := member(t, cli, "n1", st, 2*time.Second, 10*time.Millisecond, nil, nil)
	statusKey := PodKey(StatusPrefix("n1"), "default", "a")
	eventually(t, 5*time.Second, "status key", func() bool { _, _, ok := get(t, cli, statusKey); return ok })
	old, _ := lease.Current()
	if _, err := cli.Revoke(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "keys under a new lease", func() bool {
		_, l1, ok1 := get(t, cli, statusKey)
		_, l2, ok2 := get(t, cli, DefaultNodesPrefix+"n1")
		return ok1 && ok2 && l1 != int64(old) && l1 == l2
	})
}

// TestStatusWrittenOnlyOnChange: a status key is written when the pod
// appears and when its status changes, never for a rewrite of the same
// status, and deleted with the pod; changes within one interval are one
// batch. The publisher runs on a fake clock: a batch it holds back is
// written when the test steps the clock.
func TestStatusWrittenOnlyOnChange(t *testing.T) {
	e := testutil.StartEtcd(t)
	obs := &countingObserver{}
	cli := client(t, e, obs)
	check := client(t, e, nil)
	st, _ := store.New(nil)
	m := &countingMetrics{}
	const interval = 300 * time.Millisecond
	clk := clocktesting.NewFakeClock(time.Now())
	member(t, cli, "n1", st, 10*time.Second, interval, clk, m)
	// flushed polls cond, stepping the publisher's clock by an interval
	// every tick.
	flushed := func(what string, cond func() bool) {
		t.Helper()
		eventually(t, 5*time.Second, what, func() bool { clk.Step(interval); return cond() })
	}
	message := func(key string) string {
		v, _, _ := get(t, check, key)
		var s v1.PodStatus
		_ = json.Unmarshal([]byte(v), &s)
		return s.Message
	}
	for _, name := range []string{"a", "b", "c"} {
		if err := st.UpsertPod(testPod(name, v1.PodPending)); err != nil {
			t.Fatal(err)
		}
	}
	key := PodKey(StatusPrefix("n1"), "default", "a")
	keyB, keyC := PodKey(StatusPrefix("n1"), "default", "b"), PodKey(StatusPrefix("n1"), "default", "c")
	flushed("three status keys, written once each", func() bool {
		resp, err := check.Get(context.Background(), StatusPrefix("n1"), clientv3.WithPrefix(), clientv3.WithCountOnly())
		return err == nil && resp.Count == 3 && m.writes.Load() == 3
	})
	// Unchanged rewrites (a resync) over more than an interval: no etcd
	// write at all. The change of c after them is the write that shows
	// they were all seen: it must be the only transaction since, and c's
	// key the only key written.
	rev := revision(t, check)
	for range 5 {
		if _, err := st.UpdatePod("default/a", func(p *model.Pod) bool { p.Status = *p.Status.DeepCopy(); return true }); err != nil {
			t.Fatal(err)
		}
		clk.Step(interval / 3)
	}
	if _, err := st.UpdatePod("default/c", func(p *model.Pod) bool { p.Status.Message = "after the rewrites"; return true }); err != nil {
		t.Fatal(err)
	}
	flushed("the change after the rewrites", func() bool {
		return message(keyC) == "after the rewrites" && m.writes.Load() >= 4
	})
	if got := revision(t, check); got != rev+1 {
		t.Fatalf("etcd revision moved from %d to %d on unchanged statuses and one change", rev, got)
	}
	if n := m.writes.Load(); n != 4 {
		t.Fatalf("%d status keys written for 3 new pods and one change, want 4: unchanged statuses were rewritten", n)
	}
	// Ten changes of two pods within one interval: one or two batches.
	txns := obs.count("txn")
	writes := m.writes.Load()
	for i := range 10 {
		phase := v1.PodRunning
		if i%2 == 1 {
			phase = v1.PodPending
		}
		for _, k := range []string{"default/a", "default/b"} {
			_, _ = st.UpdatePod(k, func(p *model.Pod) bool { p.Status.Phase = phase; p.Status.Message = itoa(i); return true })
		}
	}
	flushed("the last statuses", func() bool { return message(key) == "9" && message(keyB) == "9" })
	if n := obs.count("txn") - txns; n > 2 {
		t.Errorf("%d transactions for 20 changes within one interval, want at most 2", n)
	}
	if n := m.writes.Load() - writes; n > 4 {
		t.Errorf("%d status keys written for 2 pods changed within one interval, want at most 4", n)
	}
	if err := st.DeletePod("default/c"); err != nil {
		t.Fatal(err)
	}
	flushed("deleted pod's status key gone", func() bool {
		_, _, ok := get(t, check, keyC)
		return !ok
	})
	if v, _, _ := get(t, check, DefaultNodesPrefix+"n1"); !json.Valid([]byte(v)) {
		t.Fatalf("node key: %q", v)
	} else {
		var n v1.Node
		_ = json.Unmarshal([]byte(v), &n)
		if n.Annotations[PodsAnnotation] != "2" {
			t.Errorf("node's pod count %q after deleting one of three pods", n.Annotations[PodsAnnotation])
		}
	}
}
