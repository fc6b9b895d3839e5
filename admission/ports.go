package admission

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
)

// portClaims are the host ports held by the pods a decision admits, by
// port and protocol (only those can conflict), each list in the order
// added, so that a check costs the claims of its own ports.
type portClaims map[portSlot][]portClaim

type portSlot struct {
	proto v1.Protocol
	port  int32
}

type portClaim struct {
	key string
	hp  model.HostPort
}

// add records the host ports of pod key.
func (c portClaims) add(key string, p *v1.Pod) {
	for hp := range model.HostPorts(p) {
		s := portSlot{hp.Protocol, hp.Port}
		c[s] = append(c[s], portClaim{key, hp})
	}
}

// holder is the first pod but key holding a port hp conflicts with.
func (c portClaims) holder(key string, hp model.HostPort) (string, bool) {
	for _, t := range c[portSlot{hp.Protocol, hp.Port}] {
		if t.key != key && hp.Conflicts(t.hp) {
			return t.key, true
		}
	}
	return "", false
}

// clashMessage is the refusal of a pod whose hp holder holds.
func clashMessage(hp model.HostPort, holder string) string {
	return fmt.Sprintf("spec.containers[].ports: hostPort %d/%s on %s already used by %s", hp.Port, hp.Protocol, hp.IP, holder)
}
