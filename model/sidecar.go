package model

import v1 "k8s.io/api/core/v1"

// IsSidecar reports whether init container c is a sidecar (KEP-753):
// restartPolicy Always, so it starts in order, keeps running beside the
// app containers and restarts by its own policy. Meaningless for an app
// container, whose restartPolicy validation refuses.
func IsSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}
