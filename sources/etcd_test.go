package sources

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/berth-dev/berth/etcdclient"
	"github.com/berth-dev/berth/internal/testutil"
)

// startEtcd and newEtcd give a test its own real etcd (internal/testutil).
func startEtcd(t *testing.T) *testutil.Etcd { return testutil.StartEtcd(t) }
func newEtcd(t *testing.T) *testutil.Etcd   { return testutil.NewEtcd(t) }

func mustPut(t *testing.T, c *clientv3.Client, key, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Put(ctx, key, value); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

func mustDelete(t *testing.T, c *clientv3.Client, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Delete(ctx, key); err != nil {
		t.Fatalf("delete %s: %v", key, err)
	}
}

const (
	testPrefix    = "/registry/hosts/n1/pods/"
	testLegacyKey = "/registry/hosts/n1/kubelet"
)

func newTestEtcdSource(endpoint string) *EtcdSource {
	s := NewEtcdSource("etcd", EtcdConfig{Client: etcdclient.Config{Endpoints: []string{endpoint}, DialTimeout: time.Second}, Prefix: testPrefix, LegacyKey: testLegacyKey}, Options{})
	s.RequestTimeout = 500 * time.Millisecond
	s.RetryInitial = 20 * time.Millisecond
	s.RetryMax = 200 * time.Millisecond
	s.CheckInterval = -1 // tests that want checks set them
	return s
}

// recorder keeps every update of a source, for checks over the whole run.
type recorder struct {
	mu  sync.Mutex
	all []Update
	ch  chan Update
}

func record(t *testing.T, updates <-chan Update) *recorder {
	r := &recorder{ch: make(chan Update, 1000)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case u := <-updates:
				r.mu.Lock()
				r.all = append(r.all, u)
				r.mu.Unlock()
				select {
				case r.ch <- u:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

func (r *recorder) since(n int) []Update {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.all[n:])
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.all)
}

const legacyList = `- version: v1beta1
  id: legacy-a
  containers: [{name: c, image: busybox}]
- version: v1beta1
  id: legacy-b
  containers: [{name: c, image: busybox}]
`

func TestEtcdSourceListAndWatch(t *testing.T) {
	t.Parallel()
	e := startEtcd(t)
	c := e.Client()
	mustPut(t, c, testPrefix+"default/a", podManifest("a", "busybox:1"))
	mustPut(t, c, testPrefix+"default/b", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`)
	mustPut(t, c, "/registry/hosts/n1/other", podManifest("ignored", "busybox"))
	mustPut(t, c, "/registry/hosts/n2/pods/default/x", podManifest("x", "busybox"))

	updates := startSource(t, newTestEtcdSource(e.ClientURL))
	u := await(t, updates, 10*time.Second, "initial list", exactly("a", "b"))
	for _, d := range u.Pods {
		if want := testPrefix + "default/" + d.Pod.Name; d.Origin != want {
			t.Errorf("origin %q, want %q", d.Origin, want)
		}
	}

	mustPut(t, c, testPrefix+"default/c", podManifest("c", "busybox"))
	await(t, updates, 5*time.Second, "put c", exactly("a", "b", "c"))
	mustPut(t, c, testPrefix+"default/a", podManifest("a", "busybox:2"))
	await(t, updates, 5*time.Second, "update a", func(u Update) bool { return exactly("a", "b", "c")(u) && podImage(u, "a") == "busybox:2" })
	mustDelete(t, c, testPrefix+"default/b")
	await(t, updates, 5*time.Second, "delete b", exactly("a", "c"))

	// Irrelevant keys under the common watch prefix send nothing.
	mustPut(t, c, "/registry/hosts/n1/status", "x")
	mustPut(t, c, testPrefix+"default/d", podManifest("d", "busybox"))
	u = <-updates
	if !exactly("a", "c", "d")(u) {
		t.Errorf("after an irrelevant put: %s", describeFull(u))
	}

	// The seed's legacy key: a list of ContainerManifests, then of Pods.
	mustPut(t, c, testLegacyKey, legacyList)
	u = await(t, updates, 5*time.Second, "legacy list", exactly("a", "c", "d", "legacy-a", "legacy-b"))
	for _, d := range u.Pods {
		if strings.HasPrefix(d.Pod.Name, "legacy") && d.Origin != testLegacyKey {
			t.Errorf("legacy origin %q", d.Origin)
		}
	}
	mustPut(t, c, testLegacyKey, "- "+strings.ReplaceAll(podManifest("lp1", "busybox"), "\n", "\n  ")+"\n- "+strings.ReplaceAll(podManifest("lp2", "busybox"), "\n", "\n  "))
	await(t, updates, 5*time.Second, "legacy list of pods", exactly("a", "c", "d", "lp1", "lp2"))
	mustDelete(t, c, testLegacyKey)
	await(t, updates, 5*time.Second, "legacy key deleted", exactly("a", "c", "d"))

	// A bad value fails its key only; a duplicate pod key goes to the first key.
	mustPut(t, c, testPrefix+"default/d", "kind: [")
	u = await(t, updates, 5*time.Second, "bad value", func(u Update) bool { return len(u.Errors) > 0 })
	if !hasPods("a", "c")(u) || u.Errors[0].Origin != testPrefix+"default/d" || u.Errors[0].PodKey != "" {
		t.Errorf("bad value: %s", describeFull(u))
	}
	mustPut(t, c, testPrefix+"default/zz", podManifest("a", "busybox:3"))
	u = await(t, updates, 5*time.Second, "duplicate", func(u Update) bool { return len(u.Errors) == 2 })
	if !hasPods("a", "c")(u) || podImage(u, "a") != "busybox:2" || u.Errors[1].Origin != testPrefix+"default/zz" || u.Errors[1].PodKey != "default/a" {
		t.Errorf("duplicate: %s", describeFull(u))
	}
}

func TestEtcdSourceLegacyKeyAtStart(t *testing.T) {
	t.Parallel()
	e := startEtcd(t)
	c := e.Client()
	mustPut(t, c, testLegacyKey, `[{"version":"v1beta1","id":"seed","containers":[{"name":"c","image":"busybox"}]}]`)
	mustPut(t, c, testPrefix+"default/p", podManifest("p", "busybox"))
	u := await(t, startSource(t, newTestEtcdSource(e.ClientURL)), 10*time.Second, "legacy + prefix", exactly("p", "seed"))
	for _, d := range u.Pods {
		if d.Pod.Name == "seed" && d.Origin != testLegacyKey {
			t.Errorf("origin %q", d.Origin)
		}
	}
}

// checkNoLoss fails when a good update lacks one of must or holds a pod
// twice or with an error.
func checkNoLoss(t *testing.T, updates []Update, must ...string) {
	t.Helper()
	for i, u := range updates {
		if u.Err != nil {
			continue
		}
		names := podNames(u)
		if len(u.Errors) > 0 || len(slices.Compact(slices.Clone(names))) != len(names) {
			t.Errorf("update %d: %s", i, describeFull(u))
		}
		for _, m := range must {
			if !slices.Contains(names, m) {
				t.Errorf("update %d lost pod %s: %s", i, m, describeFull(u))
			}
		}
	}
}

func TestEtcdSourceSurvivesRestart(t *testing.T) {
	t.Parallel()
	e := startEtcd(t)
	c := e.Client()
	mustPut(t, c, testPrefix+"default/a", podManifest("a", "busybox"))
	mustPut(t, c, testPrefix+"default/b", podManifest("b", "busybox"))
	mustPut(t, c, testLegacyKey, legacyList)
	s := newTestEtcdSource(e.ClientURL)
	s.CheckInterval = 100 * time.Millisecond
	rec := record(t, startSource(t, s))
	await(t, rec.ch, 10*time.Second, "initial", exactly("a", "b", "legacy-a", "legacy-b"))
	mustPut(t, c, testPrefix+"default/c", podManifest("c", "busybox"))
	await(t, rec.ch, 5*time.Second, "c", exactly("a", "b", "c", "legacy-a", "legacy-b"))

	mark := rec.count()
	e.Stop()
	await(t, rec.ch, 5*time.Second, "outage reported by the check", failedWith("unreachable while watching"))
	e.Start()
	c = e.Client()
	mustPut(t, c, testPrefix+"default/d", podManifest("d", "busybox"))
	mustDelete(t, c, testPrefix+"default/a")
	await(t, rec.ch, 15*time.Second, "changes after restart", exactly("b", "c", "d", "legacy-a", "legacy-b"))
	checkNoLoss(t, rec.since(mark), "b", "c", "legacy-a", "legacy-b")
}

// tcpProxy forwards connections to an etcd; while paused it cuts every
// connection, so the source's watch loses its stream.
type tcpProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	paused bool
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: strings.TrimPrefix(target, "http://"), conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *tcpProxy) url() string { return "http://" + p.ln.Addr().String() }

func (p *tcpProxy) serve() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.paused {
			p.mu.Unlock()
			in.Close()
			continue
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			in.Close()
			continue
		}
		p.conns[in], p.conns[out] = true, true
		p.mu.Unlock()
		p.wg.Add(2)
		pipe := func(dst, src net.Conn) {
			defer p.wg.Done()
			_, _ = io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		go pipe(out, in)
		go pipe(in, out)
	}
}

func (p *tcpProxy) pause(paused bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = paused
	if paused {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

func (p *tcpProxy) close() {
	p.ln.Close()
	p.pause(true)
	p.wg.Wait()
}

func TestEtcdSourceRelistsAfterCompaction(t *testing.T) {
	t.Parallel()
	e := startEtcd(t)
	c := e.Client()
	proxy := newTCPProxy(t, e.ClientURL)
	mustPut(t, c, testPrefix+"default/a", podManifest("a", "busybox"))
	mustPut(t, c, testPrefix+"default/b", podManifest("b", "busybox"))
	rec := record(t, startSource(t, newTestEtcdSource(proxy.url())))
	await(t, rec.ch, 10*time.Second, "initial", exactly("a", "b"))

	// Cut the source off, change everything many times, and compact the
	// history it would need to resume its watch.
	proxy.pause(true)
	mark := rec.count()
	mustDelete(t, c, testPrefix+"default/a")
	for i := range 50 {
		mustPut(t, c, testPrefix+"default/b", podManifest("b", fmt.Sprintf("busybox:%d", i)))
	}
	mustPut(t, c, testPrefix+"default/c", podManifest("c", "busybox"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, "any")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatalf("compact: %v", err)
	}
	if n := rec.count(); n != mark {
		t.Errorf("%d updates while cut off: %s", n-mark, describeFull(rec.since(mark)[0]))
	}
	proxy.pause(false)
	await(t, rec.ch, 15*time.Second, "relisted state", func(u Update) bool {
		return exactly("b", "c")(u) && podImage(u, "b") == "busybox:49"
	})
	checkNoLoss(t, rec.since(mark), "b")

	// The new watch works.
	mustPut(t, c, testPrefix+"default/d", podManifest("d", "busybox"))
	await(t, rec.ch, 5*time.Second, "d after relist", exactly("b", "c", "d"))
}

func TestEtcdSourceUnreachableAtStart(t *testing.T) {
	t.Parallel()
	e := newEtcd(t) // not started yet
	rec := record(t, startSource(t, newTestEtcdSource(e.ClientURL)))
	u := await(t, rec.ch, 5*time.Second, "read error", func(u Update) bool { return true })
	if u.Err == nil || !strings.Contains(u.Err.Error(), "etcd") {
		t.Fatalf("first update while etcd is down: %s", describeFull(u))
	}
	await(t, rec.ch, 5*time.Second, "another read error (retrying)", func(u Update) bool { return u.Err != nil })
	e.Start()
	c := e.Client()
	mustPut(t, c, testPrefix+"default/a", podManifest("a", "busybox"))
	await(t, rec.ch, 15*time.Second, "a once etcd is up", exactly("a"))
	for i, u := range rec.since(0) {
		if u.Err == nil && !exactly()(u) && !exactly("a")(u) {
			t.Errorf("update %d: %s", i, describeFull(u))
		}
	}
}

func TestEtcdSourceStopsWhileSending(t *testing.T) {
	t.Parallel()
	e := newEtcd(t) // never started: the source is stuck sending errors
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	out := make(chan Update)
	go func() { done <- newTestEtcdSource(e.ClientURL).Run(ctx, out) }()
	<-out
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

func TestEtcdWatchKey(t *testing.T) {
	cases := []struct{ prefix, legacy, key, end string }{
		// The node's status keys (.../status/...) sort after pods/: outside.
		{"/registry/hosts/n1/pods/", "/registry/hosts/n1/kubelet", "/registry/hosts/n1/kubelet", "/registry/hosts/n1/pods0"},
		{"/p/", "", "/p/", "/p0"},
		{"", "/k", "/k", ""},
		{"/a/", "/b", "/a/", "/b\x00"},
		{"/a/", "/a/list", "/a/", "/a0"},
	}
	for _, tc := range cases {
		s := NewEtcdSource("e", EtcdConfig{Prefix: tc.prefix, LegacyKey: tc.legacy}, Options{})
		if key, end := s.watchRange(); key != tc.key || end != tc.end {
			t.Errorf("watchRange(%q, %q) = %q, %q, want %q, %q", tc.prefix, tc.legacy, key, end, tc.key, tc.end)
		}
		status := "/registry/hosts/n1/status/default/x"
		if key, end := s.watchRange(); tc.prefix == "/registry/hosts/n1/pods/" && status >= key && status < end {
			t.Errorf("the watch range covers the status key %s", status)
		}
	}
}

// TestEtcdSourceRelistsReplacedCluster: etcd comes back as another cluster
// (wiped, restored with one of the two pods, at a lower revision). The
// resumed watch would wait for revisions the new cluster never had; the
// periodic check sees the new cluster ID and the source relists. Until that
// list, every update keeps both pods.
func TestEtcdSourceRelistsReplacedCluster(t *testing.T) {
	t.Parallel()
	e := startEtcd(t)
	c := e.Client()
	mustPut(t, c, testPrefix+"default/a", podManifest("a", "busybox:1"))
	mustPut(t, c, testPrefix+"default/b", podManifest("b", "busybox:1"))
	for i := range 20 { // a revision the restored cluster does not reach
		mustPut(t, c, "/other", fmt.Sprint(i))
	}
	s := newTestEtcdSource(e.ClientURL)
	s.CheckInterval = 100 * time.Millisecond
	updates := startSource(t, s)
	await(t, updates, 10*time.Second, "initial list", exactly("a", "b"))
	r := record(t, updates)

	e.Wipe()
	side := fmt.Sprintf("http://127.0.0.1:%d", testutil.FreePort(t))
	e.StartOn(side)
	sc, err := clientv3.New(clientv3.Config{Endpoints: []string{side}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, sc, testPrefix+"default/a", podManifest("a", "busybox:1"))
	sc.Close()
	e.Stop()
	e.Start()

	deadline := time.Now().Add(15 * time.Second)
	for {
		all := r.since(0)
		i := slices.IndexFunc(all, exactly("a"))
		if i >= 0 {
			for _, u := range all[:i] {
				if u.Err == nil && !exactly("a", "b")(u) {
					t.Fatalf("an update before the relist changed the pods: %v (errors %v)", podNames(u), u.Errors)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no relist of the replaced cluster within 15 s; %d updates since, last %v", len(all), lastNames(all))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func lastNames(us []Update) []string {
	if len(us) == 0 {
		return nil
	}
	return podNames(us[len(us)-1])
}

func TestEtcdSourceReplacedHeader(t *testing.T) {
	s := &EtcdSource{clusterID: 0xa, revision: 100}
	for _, tc := range []struct {
		id   uint64
		rev  int64
		want string
	}{
		{0xa, 100, ""}, {0xa, 150, ""}, {0, 1, ""}, // same cluster; a header without an ID
		{0xb, 500, "cluster ID changed to b from a"},
		{0xa, 99, "revision went back to 99 from 100"},
	} {
		err := s.replaced(&etcdserverpb.ResponseHeader{ClusterId: tc.id, Revision: tc.rev})
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("header %x@%d: %v, want %q", tc.id, tc.rev, err, tc.want)
		}
	}
}

// TestEtcdSourceUsesSharedClient: given the agent's client, the source reads
// through it (dials nothing of its own) and leaves it open when it stops.
func TestEtcdSourceUsesSharedClient(t *testing.T) {
	t.Parallel()
	e := startEtcd(t)
	c := e.Client()
	mustPut(t, c, testPrefix+"default/a", podManifest("a", "busybox:1"))
	// Client points nowhere: only Conn can reach etcd.
	s := NewEtcdSource("etcd", EtcdConfig{Client: etcdclient.Config{Endpoints: []string{"127.0.0.1:1"}}, Conn: c, Prefix: testPrefix}, Options{})
	s.CheckInterval = -1
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan Update)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, out) }()
	await(t, out, 10*time.Second, "list through the shared client", exactly("a"))
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := c.Get(context.Background(), testPrefix); err != nil {
		t.Fatalf("the shared client was closed by the source: %v", err)
	}
}
