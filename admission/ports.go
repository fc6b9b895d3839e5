package admission

import (
	"fmt"
	"iter"

	v1 "k8s.io/api/core/v1"
)

// hostPort is one port a pod binds on the host.
type hostPort struct {
	ip    string
	proto v1.Protocol
	port  int32
}

// hostPorts yields the host ports pod binds: its hostPorts, and under
// hostNetwork every containerPort. It allocates nothing.
func hostPorts(p *v1.Pod) iter.Seq[hostPort] {
	return func(yield func(hostPort) bool) {
		for i := range p.Spec.Containers {
			for _, port := range p.Spec.Containers[i].Ports {
				if port.HostPort == 0 && !p.Spec.HostNetwork {
					continue
				}
				hp := port.HostPort
				if p.Spec.HostNetwork && hp == 0 {
					hp = port.ContainerPort
				}
				ip := port.HostIP
				if ip == "" {
					ip = "0.0.0.0"
				}
				if !yield(hostPort{ip, port.Protocol, hp}) {
					return
				}
			}
		}
	}
}

// portClaims are the host ports held by admitted pods, by port and
// protocol (only those can conflict), each list in the order added, so
// that a check costs the claims of its own ports, not of every pod.
type portClaims map[portSlot][]portClaim

type portSlot struct {
	proto v1.Protocol
	port  int32
}

type portClaim struct {
	key string
	hp  hostPort
}

// add records the host ports of pod key.
func (c portClaims) add(key string, p *v1.Pod) {
	for hp := range hostPorts(p) {
		c.addPort(key, hp)
	}
}

// addPort records host port hp of pod key.
func (c portClaims) addPort(key string, hp hostPort) {
	s := portSlot{hp.proto, hp.port}
	c[s] = append(c[s], portClaim{key, hp})
}

// clash describes the first port of p (pod key) that another pod holds,
// naming the holder as name does, or returns "".
func (c portClaims) clash(key string, p *v1.Pod, name func(key string) string) string {
	for hp := range hostPorts(p) {
		for _, t := range c[portSlot{hp.proto, hp.port}] {
			if t.key != key && conflicts(hp, t.hp) {
				return clashMessage(hp, name(t.key))
			}
		}
	}
	return ""
}

// conflicts reports whether a and b cannot both be bound: same port and
// protocol on the same address, or either on every address.
func conflicts(a hostPort, b hostPort) bool {
	return a.port == b.port && a.proto == b.proto && (a.ip == b.ip || a.ip == "0.0.0.0" || b.ip == "0.0.0.0")
}

// clashMessage is the refusal of a pod whose hp holder holds.
func clashMessage(hp hostPort, holder string) string {
	return fmt.Sprintf("spec.containers[].ports: hostPort %d/%s on %s already used by %s", hp.port, hp.proto, hp.ip, holder)
}
