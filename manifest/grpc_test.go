package manifest

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

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

func TestGRPCProbeValidation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		action *v1.GRPCAction
		want   string
	}{
		{"port missing", &v1.GRPCAction{}, "spec.containers[0].livenessProbe.grpc.port: Invalid value: 0: must be between 1 and 65535, inclusive"},
		{"port too big", &v1.GRPCAction{Port: 65536}, "spec.containers[0].livenessProbe.grpc.port: Invalid value: 65536: must be between 1 and 65535, inclusive"},
		{"bad mode", &v1.GRPCAction{Port: 1, Mode: ptr.To(v1.GRPCProbeMode("tls"))},
			`spec.containers[0].livenessProbe.grpc.mode: Unsupported value: "tls": supported values: "Plaintext", "TLS"`},
	} {
		errs := specErrs(t, func(p *v1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{GRPC: tc.action}}
		}, Options{})
		if !slices.Contains(errs, tc.want) {
			t.Errorf("%s: got %q\nwant %q", tc.name, errs, tc.want)
		}
	}
	errs := specErrs(t, func(p *v1.Pod) {
		p.Spec.Containers[0].ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{
			Exec: &v1.ExecAction{Command: []string{"true"}}, GRPC: &v1.GRPCAction{Port: 1}}}
	}, Options{})
	if want := "spec.containers[0].readinessProbe.grpc: Forbidden: may not specify more than 1 handler type"; !slices.Contains(errs, want) {
		t.Errorf("exec and grpc: got %q", errs)
	}
	// Only probes have a grpc action; a hook's YAML naming one is an
	// unknown field.
	errs = decodeErrs(t, `apiVersion: v1
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
