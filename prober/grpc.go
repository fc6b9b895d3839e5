package prober

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/internal/kubeversion"
)

// grpcUserAgent is the kubelet's probe user agent for the Kubernetes
// release berth speaks; grpc-go appends its own "grpc-go/x.y.z".
var grpcUserAgent = kubeversion.Get().UserAgent("probe")

// grpcCheck calls grpc.health.v1.Health/Check on the pod's IP as the
// kubelet's gRPC prober does: a new connection per probe, plaintext unless
// mode is TLS (then unverified, as for HTTPS probes), g.Service as the
// request's service (nil: ""), and success only for SERVING. Every failure
// carries the kubelet's message. ctx bounds the whole probe; timeout only
// names it in messages.
func grpcCheck(ctx context.Context, g *v1.GRPCAction, t Target, timeout time.Duration) error {
	if t.PodIP == "" {
		return errNoPodIP
	}
	if g.Port <= 0 || g.Port > 65535 {
		return fmt.Errorf("invalid port %d", g.Port)
	}
	addr := net.JoinHostPort(t.PodIP, strconv.Itoa(int(g.Port)))
	creds := insecure.NewCredentials()
	if g.Mode != nil && *g.Mode == v1.GRPCProbeModeTLS {
		creds = credentials.NewTLS(&tls.Config{InsecureSkipVerify: true}) //nolint:gosec // a probe checks health, not identity
	}
	var d lastErrDialer
	// passthrough: the address is an IP, no resolver; the custom dialer
	// also keeps any HTTPS_PROXY of berth's environment out of the probe.
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(creds),
		grpc.WithUserAgent(grpcUserAgent),
		grpc.WithContextDialer(d.dial),
		grpc.WithDisableRetry())
	if err != nil {
		return fmt.Errorf("error: failed to connect service at %q: %+v", addr, err)
	}
	defer conn.Close()
	if err := waitReady(ctx, conn); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("timeout: failed to connect service %q within %v: %+v%s", addr, timeout, err, d.last())
		}
		return fmt.Errorf("error: failed to connect service at %q: %+v%s", addr, err, d.last())
	}
	service := ""
	if g.Service != nil {
		service = *g.Service
	}
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		switch status.Code(err) {
		case codes.Unimplemented:
			return fmt.Errorf("error: this server does not implement the grpc health protocol (grpc.health.v1.Health): %s", status.Convert(err).Message())
		case codes.DeadlineExceeded:
			return fmt.Errorf("timeout: health rpc did not complete within %v", timeout)
		}
		return fmt.Errorf("error: health rpc probe failed: %+v", err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("service unhealthy (responded with %q)", resp.GetStatus().String())
	}
	return nil
}

// waitReady connects conn and waits until it is ready, as the kubelet's
// blocking dial does: a refused connection is retried until ctx ends.
func waitReady(ctx context.Context, conn *grpc.ClientConn) error {
	conn.Connect()
	for {
		s := conn.GetState()
		switch s {
		case connectivity.Ready:
			return nil
		case connectivity.Shutdown:
			return errors.New("connection shut down")
		case connectivity.Idle:
			conn.Connect()
		}
		if !conn.WaitForStateChange(ctx, s) {
			return ctx.Err()
		}
	}
}

// lastErrDialer dials TCP and remembers the last failure, so that a probe
// that timed out connecting can say why.
type lastErrDialer struct {
	mu  sync.Mutex
	err error
}

func (d *lastErrDialer) dial(ctx context.Context, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		d.mu.Lock()
		d.err = err
		d.mu.Unlock()
	}
	return c, err
}

// last is "; last error: ..." when a dial failed, else "".
func (d *lastErrDialer) last() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err == nil {
		return ""
	}
	return "; last error: " + d.err.Error()
}
