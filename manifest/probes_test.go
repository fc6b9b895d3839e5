package manifest

import (
	"strings"
	"testing"

	"github.com/berth-dev/berth/model"
)

// gRPC probes on every probe kind load, at baseline too (a grpc action has
// no host: it always reaches the pod's own IP).
func TestGRPCProbesAccepted(t *testing.T) {
	const pod = `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: app
    image: berth/testapp:1
    livenessProbe: {grpc: {port: 9000}}
    readinessProbe: {grpc: {port: 9000, service: readiness}}
    startupProbe: {grpc: {port: 9000, service: "", mode: Plaintext}, failureThreshold: 30}
  - name: tls
    image: berth/testapp:1
    livenessProbe: {grpc: {port: 8443, mode: TLS}}
`
	for _, level := range []model.PodSecurityLevel{model.LevelPrivileged, model.LevelBaseline} {
		pods := decodeOK(t, pod, Options{Level: level})
		if len(pods) != 1 {
			t.Fatalf("%s: %d pods", level, len(pods))
		}
		c := pods[0].Pod.Spec.Containers[0]
		if g := c.ReadinessProbe.GRPC; g == nil || g.Port != 9000 || g.Service == nil || *g.Service != "readiness" {
			t.Errorf("readiness grpc %+v", c.ReadinessProbe.GRPC)
		}
	}
}

// A sidecar with a startup probe, a readiness probe and a preStop hook,
// coordinating through an emptyDir (the website's startup-coordination
// pattern), validates as the API server accepts it.
func TestSidecarWithProbesValidates(t *testing.T) {
	pods := decodeOK(t, `apiVersion: v1
kind: Pod
metadata:
  name: coordinated
spec:
  initContainers:
  - name: writer
    image: berth/testapp:1
    restartPolicy: Always
    command: ["sh", "-c", "echo ready > /shared/flag; sleep 3600"]
    startupProbe:
      exec:
        command: ["test", "-f", "/shared/flag"]
      periodSeconds: 2
    readinessProbe:
      tcpSocket:
        port: 8080
    livenessProbe:
      exec:
        command: ["true"]
    lifecycle:
      preStop:
        exec:
          command: ["sleep", "1"]
    volumeMounts:
    - name: shared
      mountPath: /shared
  containers:
  - name: app
    image: berth/testapp:1
    volumeMounts:
    - name: shared
      mountPath: /shared
  volumes:
  - name: shared
    emptyDir: {}
`, Options{})
	if len(pods) != 1 {
		t.Fatalf("got %d pods", len(pods))
	}
	ic := pods[0].Pod.Spec.InitContainers[0]
	if ic.StartupProbe == nil || ic.StartupProbe.FailureThreshold != 3 {
		t.Errorf("the sidecar's startup probe is not defaulted: %+v", ic.StartupProbe)
	}
}

// Only probes have a grpc action; a hook's YAML naming one is an unknown
// field.
func TestGRPCHookIsUnknownField(t *testing.T) {
	errs := decodeErrs(t, `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - {name: app, image: i, lifecycle: {postStart: {grpc: {port: 1}}}}
`, Options{})
	if len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), "grpc") {
		t.Errorf("grpc postStart hook: %q", errs)
	}
}
