package e2e

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func podReady(p *v1.Pod) v1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status
		}
	}
	return ""
}

// TestGRPCProbes: gRPC startup, readiness and liveness probes against the
// testapp's grpc.health.v1 server on the real engine. Readiness (service
// "ready", NOT_SERVING at start) drives the Ready condition both ways
// without a restart; the overall service turning NOT_SERVING fails the
// liveness probe, and berth restarts the container (Unhealthy, Killing).
func TestGRPCProbes(t *testing.T) {
	b := startBerth(t, Options{})
	hostPort := freePort(t)
	writeFile(t, b.Pods, "grpc.yaml", manifest("grpc", "", fmt.Sprintf(`      args: [grpc-health, "9000", ready=NOT_SERVING]
      env: [{name: PORT, value: "8080"}]
      ports: [{containerPort: 8080, hostPort: %d, hostIP: 127.0.0.1}]
      startupProbe: {grpc: {port: 9000}, periodSeconds: 1, failureThreshold: 30}
      livenessProbe: {grpc: {port: 9000}, periodSeconds: 1, failureThreshold: 1}
      readinessProbe: {grpc: {port: 9000, service: ready}, periodSeconds: 1, failureThreshold: 1}
`, hostPort)))
	set := func(service, status string) {
		t.Helper()
		httpWant(t, fmt.Sprintf("http://127.0.0.1:%d/grpc-health?service=%s&status=%s", hostPort, service, status), status)
	}
	readiness := func(result string) float64 {
		text, err := b.Metrics()
		if err != nil {
			t.Fatal(err)
		}
		v, _ := metricValue(text, fmt.Sprintf(`berth_probe_results_total{probe="readiness",result=%q}`, result))
		return v
	}

	status(t, b, "grpc", "running, its readiness probe failing", func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Running != nil && readiness("failure") >= 1
	})
	if p, _ := b.Pod("grpc"); podReady(p) == v1.ConditionTrue {
		t.Fatalf("Ready while the readiness service is NOT_SERVING: %+v", p.Status.Conditions)
	}
	set("ready", "SERVING")
	status(t, b, "grpc", "Ready", func(p *v1.Pod) bool { return podReady(p) == v1.ConditionTrue })
	set("ready", "NOT_SERVING")
	p := status(t, b, "grpc", "not Ready again", func(p *v1.Pod) bool { return podReady(p) == v1.ConditionFalse })
	if n := restarts(p); n != 0 {
		t.Fatalf("readiness failures restarted the container %d times", n)
	}
	if hasEvent(podEvents(t, b, "grpc"), "Unhealthy") {
		t.Fatal("Unhealthy before the liveness service failed")
	}

	set("", "NOT_SERVING")
	status(t, b, "grpc", "restarted after its gRPC liveness probe failed", func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return restarts(p) == 1 && cs[0].State.Running != nil
	})
	evs := podEvents(t, b, "grpc")
	var unhealthy []string
	for _, e := range evs {
		if e.Reason == "Unhealthy" {
			unhealthy = append(unhealthy, e.Message)
		}
	}
	if len(unhealthy) == 0 || !strings.Contains(unhealthy[0], "liveness") || !hasEvent(evs, "Killing") {
		t.Errorf("events lack a liveness Unhealthy and Killing: %+v", evs)
	}
	// The new process starts with "ready" NOT_SERVING again.
	if p, _ := b.Pod("grpc"); podReady(p) == v1.ConditionTrue {
		t.Errorf("the restarted container is Ready: %+v", p.Status.Conditions)
	}
}
