package podconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

func hashOf(v interface{}) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("hash: %v", err)) // v1 types always marshal
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// ContainerHash identifies the spec of one container, so that an edit of
// that container (and only that) changes it. Volumes it mounts are included,
// and the pod-level fields its config is built from; those are omitted when
// unset, so hashes of pods that do not use them stay as they were.
func ContainerHash(pod *v1.Pod, c *v1.Container) string {
	var vols []v1.Volume
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Spec.Volumes {
			if v.Name == m.Name {
				vols = append(vols, v)
			}
		}
	}
	var meta map[string]string
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && strings.HasPrefix(e.ValueFrom.FieldRef.FieldPath, "metadata.") {
			if meta == nil {
				meta = map[string]string{}
			}
			// Labels and annotations an env var reads are part of its spec.
			meta[e.ValueFrom.FieldRef.FieldPath] = metadataValue(pod, e.ValueFrom.FieldRef.FieldPath)
		}
	}
	return hashOf(struct {
		C        *v1.Container
		Vols     []v1.Volume
		PodSC    *v1.PodSecurityContext   `json:",omitempty"`
		SharePID *bool                    `json:",omitempty"`
		Meta     map[string]string        `json:",omitempty"`
		Priority string                   `json:",omitempty"`
		PodRes   *v1.ResourceRequirements `json:",omitempty"`
	}{c, vols, pod.Spec.SecurityContext, pod.Spec.ShareProcessNamespace, meta, pod.Spec.PriorityClassName, pod.Spec.Resources})
}

// SandboxHash identifies the pod-level namespaces and the files they share
// (ports, hostname, DNS, hosts, sysctls, Memory emptyDirs); when it changes
// the whole pod is recreated. Fields added since the first release are
// omitted when unset, so existing pods keep their hash.
func SandboxHash(pod *v1.Pod) string {
	type port struct {
		Port   int32
		Proto  v1.Protocol
		HostIP string
		Host   int32
	}
	var ports []port
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			ports = append(ports, port{p.ContainerPort, p.Protocol, p.HostIP, p.HostPort})
		}
	}
	var memVols []v1.Volume
	for _, v := range pod.Spec.Volumes {
		if IsMemoryEmptyDir(&v) {
			memVols = append(memVols, v)
		}
	}
	var sysctls []v1.Sysctl
	var fsg *int64
	if sc := pod.Spec.SecurityContext; sc != nil {
		sysctls, fsg = sc.Sysctls, sc.FSGroup
	}
	if len(memVols) == 0 {
		fsg = nil
	}
	return hashOf(struct {
		HostNetwork, HostPID bool
		Hostname             string
		Ports                []port
		HostIPC              bool             `json:",omitempty"`
		Subdomain            string           `json:",omitempty"`
		FQDN                 *bool            `json:",omitempty"`
		DNSPolicy            v1.DNSPolicy     `json:",omitempty"`
		DNSConfig            *v1.PodDNSConfig `json:",omitempty"`
		HostAliases          []v1.HostAlias   `json:",omitempty"`
		Sysctls              []v1.Sysctl      `json:",omitempty"`
		MemoryVolumes        []v1.Volume      `json:",omitempty"`
		FSGroup              *int64           `json:",omitempty"`
	}{pod.Spec.HostNetwork, pod.Spec.HostPID, pod.Spec.Hostname, ports,
		pod.Spec.HostIPC, pod.Spec.Subdomain, pod.Spec.SetHostnameAsFQDN, pod.Spec.DNSPolicy, pod.Spec.DNSConfig,
		pod.Spec.HostAliases, sysctls, memVols, fsg})
}

// SpecHash identifies the whole spec of the pod.
func SpecHash(pod *v1.Pod) string { return hashOf(pod.Spec) }
