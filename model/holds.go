package model

import (
	"iter"
	"strconv"

	v1 "k8s.io/api/core/v1"
)

// AnyIP is the host address of a port bound on every address.
const AnyIP = "0.0.0.0"

// HostPort is one port a pod binds on the host.
type HostPort struct {
	IP       string
	Protocol v1.Protocol
	Port     int32
}

// Key is hp's index key, "protocol/port/ip": the keys a port can clash
// with share the prefix SlotPrefix.
func (hp HostPort) Key() string { return hp.SlotPrefix() + hp.IP }

// SlotPrefix is "protocol/port/", the prefix of the keys of every address
// of hp's protocol and port.
func (hp HostPort) SlotPrefix() string {
	return string(hp.Protocol) + "/" + strconv.Itoa(int(hp.Port)) + "/"
}

// Conflicts reports whether hp and o cannot both be bound: the same port
// and protocol on the same address, or either on every address.
func (hp HostPort) Conflicts(o HostPort) bool {
	return hp.Port == o.Port && hp.Protocol == o.Protocol && (hp.IP == o.IP || hp.IP == AnyIP || o.IP == AnyIP)
}

// HostPorts yields the host ports pod binds: its hostPorts, and under
// hostNetwork every containerPort; an unset hostIP is AnyIP. It allocates
// nothing.
func HostPorts(pod *v1.Pod) iter.Seq[HostPort] {
	return func(yield func(HostPort) bool) {
		if pod == nil {
			return
		}
		for i := range pod.Spec.Containers {
			for _, port := range pod.Spec.Containers[i].Ports {
				if port.HostPort == 0 && !pod.Spec.HostNetwork {
					continue
				}
				hp := port.HostPort
				if pod.Spec.HostNetwork && hp == 0 {
					hp = port.ContainerPort
				}
				ip := port.HostIP
				if ip == "" {
					ip = AnyIP
				}
				if !yield(HostPort{ip, port.Protocol, hp}) {
					return
				}
			}
		}
	}
}

// ClaimKeys are the "namespace/name" keys of the PersistentVolumeClaims pod
// mounts, in volume order (an unset namespace is "default", as in a pod
// key).
func ClaimKeys(pod *v1.Pod) []string {
	if pod == nil {
		return nil
	}
	ns := pod.Namespace
	if ns == "" {
		ns = v1.NamespaceDefault
	}
	var out []string
	for _, vol := range pod.Spec.Volumes {
		if c := vol.PersistentVolumeClaim; c != nil {
			out = append(out, ns+"/"+c.ClaimName)
		}
	}
	return out
}
