package validation

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateGRPC checks a probe's grpc action as the API server does: a port
// number (a grpc action has no named port) and, when set, a known mode.
func validateGRPC(g *v1.GRPCAction, p *field.Path) field.ErrorList {
	errs := validatePort(intstr.FromInt32(g.Port), p.Child("port"))
	modes := []v1.GRPCProbeMode{v1.GRPCProbeModePlaintext, v1.GRPCProbeModeTLS}
	if g.Mode != nil && !slices.Contains(modes, *g.Mode) {
		errs = append(errs, field.NotSupported(p.Child("mode"), *g.Mode, modes))
	}
	return errs
}
