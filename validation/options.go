// Package validation checks decoded, defaulted pods and objects against what
// berth can run and what a source's pods may do: the API's field rules, the
// field table of supported fields, and the Pod Security Standards levels.
// manifest decodes and defaults, then calls it. Pure: no I/O, no clock; it
// never modifies what it checks.
package validation

import "github.com/berth-dev/berth/model"

// Options say what the pods of a source may do.
type Options struct {
	// Level is the Pod Security Standards profile the source's pods must
	// meet (see podsecurity.go); "" is baseline, so a forgotten level
	// fails closed.
	Level model.PodSecurityLevel
	// HostPorts are the host ports baseline and restricted pods may claim;
	// nil is model.DefaultHostPorts.
	HostPorts model.PortRanges
	// AllowedUnsafeSysctls are sysctls (or "prefix.*" globs) beyond the
	// kubelet's safe set that pods of any level may set.
	AllowedUnsafeSysctls []string
	// MaxContainers caps init and app containers of one pod; 0 is
	// DefaultMaxContainers.
	MaxContainers int
	// SandboxRepositories are the repositories of the sandbox image, which
	// pods below privileged may not name (pause.Reserved of the configured
	// pod_infra_image); nil is berth's own (pause.Reserved("")).
	SandboxRepositories []string
	// NodeIP is the node's address, a hostIP that baseline pods may bind.
	NodeIP string
}

// DefaultMaxContainers caps a pod's init and app containers together.
const DefaultMaxContainers = 100

// ContainerLimit is how many init and app containers one pod may have:
// MaxContainers, or DefaultMaxContainers when that is not positive.
func (o Options) ContainerLimit() int {
	if o.MaxContainers <= 0 {
		return DefaultMaxContainers
	}
	return o.MaxContainers
}
