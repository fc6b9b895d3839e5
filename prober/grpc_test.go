package prober

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	grpchealth "google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/berth-dev/berth/runtime/fake"
)

// seen records what a gRPC server was asked: user agents and services.
type seen struct {
	mu       sync.Mutex
	agents   []string
	services []string
}

func (s *seen) intercept(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	s.mu.Lock()
	s.agents = append(s.agents, md.Get("user-agent")...)
	if r, ok := req.(*healthpb.HealthCheckRequest); ok {
		s.services = append(s.services, r.GetService())
	}
	s.mu.Unlock()
	return h(ctx, req)
}

// grpcServer serves srv (with register) on a loopback port and returns the
// port; opts add server options such as TLS.
func grpcServer(t *testing.T, register func(*grpc.Server), opts ...grpc.ServerOption) (int32, *seen) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &seen{}
	srv := grpc.NewServer(append(opts, grpc.UnaryInterceptor(s.intercept))...)
	register(srv)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return int32(ln.Addr().(*net.TCPAddr).Port), s
}

// blockingHealth answers Check only when the caller gives up.
type blockingHealth struct {
	healthpb.UnimplementedHealthServer
}

func (blockingHealth) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func grpcRun(port int32, service *string, mode *v1.GRPCProbeMode, timeout time.Duration) error {
	p := &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: port, Service: service, Mode: mode}}}
	return NewExecutor(fake.New(nil)).Run(context.Background(), FromProbe(p), Target{PodIP: "127.0.0.1"}, timeout)
}

func TestGRPCProbeFollowsTheHealthProtocol(t *testing.T) {
	hs := grpchealth.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("up", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	hs.SetServingStatus("unknown", healthpb.HealthCheckResponse_UNKNOWN)
	port, seen := grpcServer(t, func(s *grpc.Server) { healthpb.RegisterHealthServer(s, hs) })

	for _, tc := range []struct {
		name    string
		service *string
		want    string // "" for success, else the error's start
	}{
		{"no service", nil, ""},
		{"serving service", ptr.To("up"), ""},
		{"not serving", ptr.To("down"), `service unhealthy (responded with "NOT_SERVING")`},
		{"unknown status", ptr.To("unknown"), `service unhealthy (responded with "UNKNOWN")`},
		{"unregistered service", ptr.To("nope"), "error: health rpc probe failed: rpc error: code = NotFound"},
	} {
		err := grpcRun(port, tc.service, nil, time.Second)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	seen.mu.Lock()
	if want := []string{"", "up", "down", "unknown", "nope"}; strings.Join(seen.services, ",") != strings.Join(want, ",") {
		t.Errorf("services asked %q, want %q", seen.services, want)
	}
	for _, ua := range seen.agents {
		if !strings.HasPrefix(ua, "kube-probe/1.") {
			t.Errorf("user agent %q", ua)
		}
	}
	seen.mu.Unlock()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	if err := grpcRun(port, nil, nil, time.Second); err == nil {
		t.Error("the server's overall status turned NOT_SERVING, the probe still passes")
	}
}

func TestGRPCProbeFailures(t *testing.T) {
	noHealth, _ := grpcServer(t, func(*grpc.Server) {})
	blocking, _ := grpcServer(t, func(s *grpc.Server) { healthpb.RegisterHealthServer(s, blockingHealth{}) })
	// A port that accepts TCP (the kernel's backlog) but never speaks HTTP/2.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	closedLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := int32(closedLn.Addr().(*net.TCPAddr).Port)
	closedLn.Close()

	const timeout = 300 * time.Millisecond
	for _, tc := range []struct {
		name string
		port int32
		want []string
	}{
		{"no health service", noHealth, []string{"error: this server does not implement the grpc health protocol (grpc.health.v1.Health): "}},
		{"check never answers", blocking, []string{"timeout: health rpc did not complete within 300ms"}},
		{"silent port", int32(silent.Addr().(*net.TCPAddr).Port), []string{`timeout: failed to connect service "127.0.0.1:`, "within 300ms"}},
		{"closed port", closed, []string{`timeout: failed to connect service "127.0.0.1:`, "connection refused"}},
	} {
		start := time.Now()
		err := grpcRun(tc.port, nil, nil, timeout)
		if err == nil {
			t.Errorf("%s: probe passed", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", tc.name, err, w)
			}
		}
		if took := time.Since(start); took > timeout+2*time.Second {
			t.Errorf("%s: took %v, the timeout is %v", tc.name, took, timeout)
		}
	}
	if err := grpcRun(closed, nil, nil, timeout); err == nil || errors.Is(err, errNoPodIP) {
		t.Fatalf("closed port: %v", err)
	}
	h := Handler{GRPC: &v1.GRPCAction{Port: noHealth}}
	if err := NewExecutor(fake.New(nil)).Run(context.Background(), h, Target{}, time.Second); !errors.Is(err, errNoPodIP) {
		t.Errorf("without a pod IP: %v", err)
	}
}

// mode: TLS dials TLS without verifying the certificate (KEP-4939);
// without it the probe speaks plaintext and cannot pass a TLS server.
func TestGRPCProbeTLSMode(t *testing.T) {
	https := httptest.NewTLSServer(http.NotFoundHandler())
	cert := https.TLS.Certificates[0]
	https.Close()
	hs := grpchealth.NewServer()
	port, _ := grpcServer(t, func(s *grpc.Server) { healthpb.RegisterHealthServer(s, hs) },
		grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})))
	if err := grpcRun(port, nil, ptr.To(v1.GRPCProbeModeTLS), time.Second); err != nil {
		t.Errorf("TLS mode against a self-signed server: %v", err)
	}
	for _, mode := range []*v1.GRPCProbeMode{nil, ptr.To(v1.GRPCProbeModePlaintext)} {
		if err := grpcRun(port, nil, mode, 300*time.Millisecond); err == nil {
			t.Errorf("mode %v passed against a TLS server", mode)
		}
	}
}

// A gRPC liveness probe drives the Manager's verdict like any other.
func TestGRPCLivenessThroughTheManager(t *testing.T) {
	hs := grpchealth.NewServer()
	port, _ := grpcServer(t, func(s *grpc.Server) { healthpb.RegisterHealthServer(s, hs) })
	e := newEnv(t, nil)
	probe := &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: port}},
		PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 1, SuccessThreshold: 1}
	spec := &v1.Container{Name: "a", LivenessProbe: probe}
	e.m.Sync("default/g", []Probed{{Target: Target{ContainerID: "c1", Spec: spec, PodIP: "127.0.0.1"}, StartedAt: e.clk.Now()}})
	e.metrics.waitFor(t, "liveness/success", 1)
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	e.tick(t, 10*time.Second)
	e.waitResult(t, "c1", Liveness, Failure)
}
