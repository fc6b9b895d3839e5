package prober

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berth-dev/berth/runtime/fake"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/internal/kubeversion"
	"github.com/berth-dev/berth/runtime"
)

// counter records what the Manager reports: results by "kind/result" and
// by Probe, durations and stopped probes.
type counter struct {
	mu      sync.Mutex
	probes  map[string]int
	byProbe map[Probe]map[Result]int
	took    []time.Duration
	stopped map[Probe]int
}

func newCounter() *counter {
	return &counter{probes: map[string]int{}, byProbe: map[Probe]map[Result]int{}, stopped: map[Probe]int{}}
}

func (c *counter) ProbeResult(p Probe, r Result, took time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.probes[string(p.Kind)+"/"+map[Result]string{Success: "success", Failure: "failure", Unknown: "unknown"}[r]]++
	if c.byProbe[p] == nil {
		c.byProbe[p] = map[Result]int{}
	}
	c.byProbe[p][r]++
	c.took = append(c.took, took)
}

func (c *counter) ProbeStopped(p Probe) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped[p]++
}

func (c *counter) stops(p Probe) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopped[p]
}

func (c *counter) results(p Probe, r Result) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byProbe[p][r]
}

func (c *counter) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.probes[k]
}

func (c *counter) waitFor(t *testing.T, k string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for c.get(k) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d results, want %d", k, c.get(k), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// health serves /healthz with the status in code.
func health(t *testing.T, code *atomic.Int32) (string, int) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" || r.Header.Get("X-Probe") != "yes" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.WriteHeader(int(code.Load()))
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	return u.Hostname(), port
}

func httpProbe(port int) *v1.Probe {
	return &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http"),
		HTTPHeaders: []v1.HTTPHeader{{Name: "X-Probe", Value: "yes"}}}},
		PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 3, SuccessThreshold: 1}
}

type env struct {
	clk      *clocktesting.FakeClock
	m        *Manager
	notified chan string
	metrics  *counter
}

func newEnv(t *testing.T, rt runtime.Runtime) *env {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e := &env{clk: clocktesting.NewFakeClock(time.Now()), notified: make(chan string, 100), metrics: newCounter()}
	if rt == nil {
		rt = fake.New(nil)
	}
	e.m = NewManager(ctx, NewExecutor(rt), e.clk, func(k string) { e.notified <- k }, e.metrics)
	return e
}

// tick advances the fake clock by one period once a worker waits on it.
func (e *env) tick(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !e.clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("no worker waiting on the clock")
		}
		time.Sleep(time.Millisecond)
	}
	e.clk.Step(d)
}

func (e *env) waitResult(t *testing.T, id string, k Kind, want Result) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for e.m.Result(id, k) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s result %v, want %v", k, e.m.Result(id, k), want)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestLivenessFailsAfterThreshold(t *testing.T) {
	var code atomic.Int32
	code.Store(200)
	host, port := health(t, &code)
	e := newEnv(t, nil)
	spec := &v1.Container{Name: "a", Ports: []v1.ContainerPort{{Name: "http", ContainerPort: int32(port)}}, LivenessProbe: httpProbe(port)}
	e.m.Sync("default/web", []Probed{{Target: Target{ContainerID: "c1", Spec: spec, PodIP: host}, StartedAt: e.clk.Now()}})
	if e.m.Result("c1", Liveness) != Success {
		t.Fatal("liveness not presumed successful at start")
	}
	e.metrics.waitFor(t, "liveness/success", 1)
	code.Store(500)
	for i := 1; i <= 2; i++ {
		e.tick(t, 10*time.Second)
		e.metrics.waitFor(t, "liveness/failure", i)
	}
	// Two failures: still alive.
	if e.m.Result("c1", Liveness) != Success {
		t.Fatal("failed before the threshold")
	}
	e.tick(t, 10*time.Second)
	e.waitResult(t, "c1", Liveness, Failure)
	if k := <-e.notified; k != "default/web" {
		t.Fatalf("notified %q", k)
	}
	if e.metrics.get("liveness/failure") != 3 || e.metrics.get("liveness/success") != 1 {
		t.Fatalf("metrics %v", e.metrics.probes)
	}
	e.m.Sync("default/web", nil)
	if e.m.Result("c1", Liveness) != Unknown {
		t.Fatal("worker not stopped by Sync")
	}
}

func TestStartupGatesReadinessAndInitialDelay(t *testing.T) {
	var code atomic.Int32
	code.Store(200)
	host, port := health(t, &code)
	e := newEnv(t, nil)
	ready := httpProbe(port)
	ready.InitialDelaySeconds = 5
	// The startup probe is a TCP probe on a closed port: it never succeeds.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	startup := &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(int32(closed))}},
		PeriodSeconds: 1, TimeoutSeconds: 1, FailureThreshold: 2, SuccessThreshold: 1}
	spec := &v1.Container{Name: "a", Ports: []v1.ContainerPort{{Name: "http", ContainerPort: int32(port)}}, ReadinessProbe: ready, StartupProbe: startup}
	e.m.Sync("default/web", []Probed{{Target: Target{ContainerID: "c1", Spec: spec, PodIP: host}, StartedAt: e.clk.Now()}})
	e.tick(t, time.Second)
	e.waitResult(t, "c1", Startup, Failure)
	if r := e.m.Result("c1", Readiness); r != Unknown {
		t.Fatalf("readiness %v while startup has not succeeded", r)
	}
}

func TestExecAndTCPProbes(t *testing.T) {
	rt := fake.New(nil)
	rt.AddImage("img")
	id, _ := rt.CreateContainer(context.Background(), &runtime.ContainerConfig{Name: "x", Image: "img"})
	_ = rt.StartContainer(context.Background(), id)
	var exit atomic.Int32
	rt.ExecFunc = func(_ string, cmd []string) (int, []byte, error) { return int(exit.Load()), nil, nil }
	ex := NewExecutor(rt)
	h := Handler{Exec: &v1.ExecAction{Command: []string{"/check"}}}
	if err := ex.Run(context.Background(), h, Target{ContainerID: id}, time.Second); err != nil {
		t.Fatal(err)
	}
	exit.Store(1)
	if err := ex.Run(context.Background(), h, Target{ContainerID: id}, time.Second); err == nil {
		t.Fatal("exit 1 counted as success")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	tcp := Handler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}}
	if err := ex.Run(context.Background(), tcp, Target{PodIP: "127.0.0.1"}, time.Second); err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if err := ex.Run(context.Background(), tcp, Target{PodIP: "127.0.0.1"}, time.Second); err == nil {
		t.Fatal("closed port counted as success")
	}
	bad := Handler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromString("nope")}}
	if err := ex.Run(context.Background(), bad, Target{PodIP: "127.0.0.1", Spec: &v1.Container{}}, time.Second); err == nil {
		t.Fatal("unknown named port accepted")
	}
}

func TestHTTPSProbeAcceptsSelfSignedCertificates(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	h := Handler{HTTPGet: &v1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(int32(port)), Scheme: v1.URISchemeHTTPS}}
	if err := NewExecutor(fake.New(nil)).Run(context.Background(), h, Target{PodIP: u.Hostname()}, time.Second); err != nil {
		t.Fatal(err)
	}
}

// A handler of a pod without an address fails instead of connecting to
// "": that would reach the host's own loopback services.
func TestHandlerWithoutPodIPNeverReachesTheHost(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	ex := NewExecutor(fake.New(nil))
	for _, h := range []Handler{
		{HTTPGet: &v1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(int32(port)), Scheme: v1.URISchemeHTTP}},
		{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}},
	} {
		if err := ex.Run(context.Background(), h, Target{}, time.Second); !errors.Is(err, errNoPodIP) {
			t.Errorf("%+v without a pod IP: %v", h, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the host's loopback server was reached %d times", n)
	}
}

// HTTP probes and hooks send the kubelet's headers: User-Agent
// kube-probe/<major>.<minor> (kube-lifecycle for hooks) of the release the
// API reports, Accept */*, each replaced by the handler's own header of
// that name (an empty Accept dropped), and a Host header as the host.
func TestHTTPHandlerHeaders(t *testing.T) {
	type seen struct{ ua, accept, host string }
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, hasAccept := r.Header["Accept"]
		accept := r.Header.Get("Accept")
		if !hasAccept {
			accept = "<none>"
		}
		got <- seen{strings.Join(r.Header.Values("User-Agent"), ","), accept, r.Host}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	minor := kubeversion.Get().Minor
	get := func(headers ...v1.HTTPHeader) *v1.HTTPGetAction {
		return &v1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(int32(port)), HTTPHeaders: headers}
	}
	for _, tc := range []struct {
		what string
		h    Handler
		want seen
	}{
		{"probe", FromProbe(&v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: get()}}), seen{"kube-probe/1." + minor, "*/*", u.Host}},
		{"hook", FromLifecycle(&v1.LifecycleHandler{HTTPGet: get()}), seen{"kube-lifecycle/1." + minor, "*/*", u.Host}},
		{"own headers", FromProbe(&v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: get(
			v1.HTTPHeader{Name: "user-agent", Value: "mine/1"}, v1.HTTPHeader{Name: "Accept", Value: "text/plain"}, v1.HTTPHeader{Name: "Host", Value: "app.example"})}}),
			seen{"mine/1", "text/plain", "app.example"}},
		{"empty Accept", FromProbe(&v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: get(v1.HTTPHeader{Name: "Accept", Value: ""})}}),
			seen{"kube-probe/1." + minor, "<none>", u.Host}},
	} {
		if err := NewExecutor(fake.New(nil)).Run(context.Background(), tc.h, Target{PodIP: u.Hostname()}, time.Second); err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		if s := <-got; s != tc.want {
			t.Errorf("%s: the server saw %+v, want %+v", tc.what, s, tc.want)
		}
	}
}
