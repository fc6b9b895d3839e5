package validation_test

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/berth-dev/berth/validation"
)

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
		}, validation.Options{})
		if !slices.Contains(errs, tc.want) {
			t.Errorf("%s: got %q\nwant %q", tc.name, errs, tc.want)
		}
	}
	errs := specErrs(t, func(p *v1.Pod) {
		p.Spec.Containers[0].ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{
			Exec: &v1.ExecAction{Command: []string{"true"}}, GRPC: &v1.GRPCAction{Port: 1}}}
	}, validation.Options{})
	if want := "spec.containers[0].readinessProbe.grpc: Forbidden: may not specify more than 1 handler type"; !slices.Contains(errs, want) {
		t.Errorf("exec and grpc: got %q", errs)
	}
}
