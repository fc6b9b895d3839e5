package validation

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// initForbidden is the API server's message for a probe or lifecycle hook
// on an init container that is not a sidecar.
const initForbidden = "may not be set for init containers without restartPolicy=Always"

// validateContainerRestart checks a container's restartPolicy as the API
// server does: only Always, and only on an init container.
func validateContainerRestart(c *v1.Container, p *field.Path, init bool) field.ErrorList {
	switch rp := c.RestartPolicy; {
	case rp == nil:
		return nil
	case !init:
		return field.ErrorList{field.Forbidden(p.Child("restartPolicy"), "may not be set for non-init containers")}
	case *rp != v1.ContainerRestartPolicyAlways:
		return field.ErrorList{field.NotSupported(p.Child("restartPolicy"), *rp, []string{string(v1.ContainerRestartPolicyAlways)})}
	}
	return nil
}
