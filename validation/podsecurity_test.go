package validation_test

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/pause"
	"github.com/berth-dev/berth/validation"
)

// The security audit's attacks: each manifest was accepted from a network
// source before; now each is refused by the named field, and the level (or
// the kubelet rule) is named.
func TestAuditedAttacksAreRefused(t *testing.T) {
	baseline := validation.Options{Level: model.LevelBaseline}
	privileged := validation.Options{Level: model.LevelPrivileged}
	restricted := validation.Options{Level: model.LevelRestricted}
	c0 := func(p *v1.Pod) *v1.Container { return &p.Spec.Containers[0] }
	csc := func(p *v1.Pod) *v1.SecurityContext {
		if c0(p).SecurityContext == nil {
			c0(p).SecurityContext = &v1.SecurityContext{}
		}
		return c0(p).SecurityContext
	}
	psc := func(p *v1.Pod) *v1.PodSecurityContext {
		if p.Spec.SecurityContext == nil {
			p.Spec.SecurityContext = &v1.PodSecurityContext{}
		}
		return p.Spec.SecurityContext
	}
	cases := []struct {
		name   string
		opts   validation.Options
		mutate func(p *v1.Pod)
		field  string
		detail string
	}{
		{"uid escaping root_dir", privileged, func(p *v1.Pod) { p.UID = "aaaaaaaa/../../../../etc" }, "metadata.uid", "must be a UUID or a DNS-1123 label"},
		{"uid dot-dot", privileged, func(p *v1.Pod) { p.UID = ".." }, "metadata.uid", "must be a UUID"},
		{"uid aimed at docker volumes", privileged, func(p *v1.Pod) { p.UID = "../../docker/volumes/x" }, "metadata.uid", "must be a UUID"},
		{"seccomp Unconfined", baseline, func(p *v1.Pod) {
			psc(p).SeccompProfile = &v1.SeccompProfile{Type: v1.SeccompProfileTypeUnconfined}
		}, "spec.securityContext.seccompProfile.type", `violates PodSecurity "baseline": seccompProfile`},
		{"container seccomp Unconfined", baseline, func(p *v1.Pod) {
			csc(p).SeccompProfile = &v1.SeccompProfile{Type: v1.SeccompProfileTypeUnconfined}
		}, "spec.containers[0].securityContext.seccompProfile.type", "seccompProfile"},
		{"seccomp Localhost outside the seccomp root", privileged, func(p *v1.Pod) {
			psc(p).SeccompProfile = &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("../../../etc/shadow")}
		}, "spec.securityContext.seccompProfile.localhostProfile", "relative path without '..'"},
		{"AppArmor Unconfined", baseline, func(p *v1.Pod) {
			csc(p).AppArmorProfile = &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeUnconfined}
		}, "spec.containers[0].securityContext.appArmorProfile.type", "appArmorProfile"},
		{"AppArmor Localhost named unconfined", baseline, func(p *v1.Pod) {
			csc(p).AppArmorProfile = &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("unconfined")}
		}, "spec.containers[0].securityContext.appArmorProfile.localhostProfile", "unconfined"},
		{"AppArmor Localhost unconfined with a trailing space", privileged, func(p *v1.Pod) {
			csc(p).AppArmorProfile = &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("unconfined ")}
		}, "spec.containers[0].securityContext.appArmorProfile.localhostProfile", "without spaces or control characters"},
		{"AppArmor Localhost unconfined with a NUL", baseline, func(p *v1.Pod) {
			psc(p).AppArmorProfile = &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("unconfined\x00")}
		}, "spec.securityContext.appArmorProfile.localhostProfile", "without spaces or control characters"},
		{"too many host ports", baseline, func(p *v1.Pod) {
			for i := range 100 {
				c0(p).Ports = append(c0(p).Ports, v1.ContainerPort{ContainerPort: int32(2000 + i), HostPort: int32(20000 + i), Protocol: v1.ProtocolTCP})
			}
		}, "spec.containers", "101 host ports; at most 100 per pod"},
		{"hostname injection", privileged, func(p *v1.Pod) { p.Spec.Hostname = "evil\n1.2.3.4 x" }, "spec.hostname", "RFC 1123"},
		{"subdomain path", privileged, func(p *v1.Pod) { p.Spec.Subdomain = "../../x" }, "spec.subdomain", "RFC 1123"},
		{"resolv.conf option injection", privileged, func(p *v1.Pod) {
			p.Spec.DNSConfig = &v1.PodDNSConfig{Options: []v1.PodDNSConfigOption{{Name: "ndots:1\nnameserver 6.6.6.6"}}}
		}, "spec.dnsConfig.options[0].name", "without spaces"},
		{"AppArmor annotation unconfined", baseline, func(p *v1.Pod) {
			p.Annotations = map[string]string{"container.apparmor.security.beta.kubernetes.io/web": "unconfined"}
		}, "metadata.annotations[container.apparmor.security.beta.kubernetes.io/web]", "appArmorProfile"},
		{"SELinux spc_t", baseline, func(p *v1.Pod) { psc(p).SELinuxOptions = &v1.SELinuxOptions{Type: "spc_t"} },
			"spec.securityContext.seLinuxOptions.type", "seLinuxOptions"},
		{"SELinux user", baseline, func(p *v1.Pod) { csc(p).SELinuxOptions = &v1.SELinuxOptions{User: "system_u"} },
			"spec.containers[0].securityContext.seLinuxOptions.user", "seLinuxOptions"},
		{"SELinux role", baseline, func(p *v1.Pod) { csc(p).SELinuxOptions = &v1.SELinuxOptions{Role: "system_r"} },
			"spec.containers[0].securityContext.seLinuxOptions.role", "seLinuxOptions"},
		{"hostPort below 1024", baseline, func(p *v1.Pod) { c0(p).Ports[0].HostPort = 80 },
			"spec.containers[0].ports[0].hostPort", "80 is outside the source's host_ports 1024-65535"},
		{"hostPort outside configured range", validation.Options{HostPorts: model.PortRanges{{Min: 30000, Max: 32767}}}, func(p *v1.Pod) {},
			"spec.containers[0].ports[0].hostPort", "18080 is outside the source's host_ports 30000-32767"},
		{"hostPort on another host address", baseline, func(p *v1.Pod) { c0(p).Ports[0].HostIP = "10.1.2.3" },
			"spec.containers[0].ports[0].hostIP", "not the node's address"},
		{"unsafe sysctl at baseline", baseline, func(p *v1.Pod) { psc(p).Sysctls = []v1.Sysctl{{Name: "kernel.core_pattern", Value: "|/tmp/x"}} },
			"spec.securityContext.sysctls[0].name", `violates PodSecurity "baseline": forbidden sysctls`},
		{"unsafe sysctl from the file source", privileged, func(p *v1.Pod) { psc(p).Sysctls = []v1.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}} },
			"spec.securityContext.sysctls[0].name", "SysctlForbidden: net.core.somaxconn is not in the kubelet's safe set nor in allowed_unsafe_sysctls"},
		{"allowed but host-wide sysctl", validation.Options{Level: model.LevelPrivileged, AllowedUnsafeSysctls: []string{"kernel.*"}}, func(p *v1.Pod) {
			psc(p).Sysctls = []v1.Sysctl{{Name: "kernel.core_pattern", Value: "|/tmp/x"}}
		}, "spec.securityContext.sysctls[0].name", "is not namespaced"},
		{"net sysctl with hostNetwork", validation.Options{Level: model.LevelPrivileged}, func(p *v1.Pod) {
			p.Spec.HostNetwork = true
			c0(p).Ports[0].HostPort = 8080
			psc(p).Sysctls = []v1.Sysctl{{Name: "net.ipv4.tcp_syncookies", Value: "1"}}
		}, "spec.securityContext.sysctls[0].name", "not allowed with hostNetwork"},
		{"hostProcess", baseline, func(p *v1.Pod) {
			csc(p).WindowsOptions = &v1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)}
		}, "spec.containers[0].securityContext.windowsOptions.hostProcess", "hostProcess"},
		{"capability NET_RAW", baseline, func(p *v1.Pod) { csc(p).Capabilities = &v1.Capabilities{Add: []v1.Capability{"NET_RAW"}} },
			"spec.containers[0].securityContext.capabilities.add[0]", "non-default capabilities"},
		{"capability SYS_ADMIN in an init container", baseline, func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "init", Image: "i", SecurityContext: &v1.SecurityContext{Capabilities: &v1.Capabilities{Add: []v1.Capability{"SYS_ADMIN"}}}}}
		}, "spec.initContainers[0].securityContext.capabilities.add[0]", "non-default capabilities"},
		{"procMount Unmasked", baseline, func(p *v1.Pod) { csc(p).ProcMount = ptr.To(v1.UnmaskedProcMount) },
			"spec.containers[0].securityContext.procMount", "procMount"},
		{"probe of a host port", baseline, func(p *v1.Pod) {
			c0(p).ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt(22), Host: "127.0.0.1"}}}
		}, "spec.containers[0].readinessProbe.tcpSocket.host", "probe or lifecycle host"},
		{"hook to another host", baseline, func(p *v1.Pod) {
			c0(p).Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromInt(80), Host: "169.254.169.254"}}}
		}, "spec.containers[0].lifecycle.postStart.httpGet.host", "probe or lifecycle host"},
		{"probe Host header", baseline, func(p *v1.Pod) {
			c0(p).LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromInt(80), HTTPHeaders: []v1.HTTPHeader{{Name: "Host", Value: "127.0.0.1"}}}}}
		}, "spec.containers[0].livenessProbe.httpGet.httpHeaders[0].name", "must not set a Host header"},
		{"too many containers", privileged, func(p *v1.Pod) {
			for i := range 100 {
				p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: fmt.Sprintf("i%d", i), Image: "i"})
			}
		}, "spec.containers", "must have at most 100 items"},
		{"pause image at baseline", baseline, func(p *v1.Pod) { c0(p).Image = "berth/pause:d7784547d26ebdf7" },
			"spec.containers[0].image", "berth/pause is the pod sandbox image's repository"},
		{"pause image by digest in an init container", restricted, func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "init", Image: "docker.io/berth/pause@sha256:" + strings.Repeat("ab", 32)}}
		}, "spec.initContainers[0].image", "berth/pause is the pod sandbox image's repository"},
		{"configured pod_infra_image's repository", validation.Options{SandboxRepositories: pause.Reserved("registry.k8s.io/pause:3.9")},
			func(p *v1.Pod) { c0(p).Image = "registry.k8s.io/pause:3.10" }, "spec.containers[0].image", "registry.k8s.io/pause is the pod sandbox image's repository"},
		{"restricted: root", restricted, func(p *v1.Pod) {}, "spec.containers[0].securityContext.runAsNonRoot", `violates PodSecurity "restricted"`},
		{"restricted: hostPath", restricted, func(p *v1.Pod) {
			p.Spec.Volumes[0] = v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/"}}}
		}, "spec.volumes[0].hostPath", `violates PodSecurity "baseline": hostPath volumes`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := validPod()
			tc.mutate(p)
			manifest.Default("t", p, false)
			var got []string
			found := false
			for _, e := range validation.Pod(p, tc.opts) {
				got = append(got, e.Error())
				if e.Field == tc.field && strings.Contains(e.Error(), tc.detail) {
					found = true
				}
			}
			if !found {
				t.Errorf("want %s: ...%s...; got %q", tc.field, tc.detail, got)
			}
		})
	}
}

// What baseline and restricted still allow: a pod as users write it, with
// unprivileged host ports, safe sysctls, RuntimeDefault and Localhost
// profiles, and a restricted pod meeting every control.
func TestLevelsAllowOrdinaryPods(t *testing.T) {
	p := validPod()
	p.Spec.SecurityContext = &v1.PodSecurityContext{
		Sysctls:        []v1.Sysctl{{Name: "net.ipv4.tcp_syncookies", Value: "1"}, {Name: "net/ipv4/ip_local_port_range", Value: "1024 65000"}},
		SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault},
	}
	p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{
		AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("berth-web")},
		SELinuxOptions:  &v1.SELinuxOptions{Type: "container_t", Level: "s0:c1,c2"},
		Capabilities:    &v1.Capabilities{Add: []v1.Capability{"NET_BIND_SERVICE"}},
	}
	p.Spec.Containers[0].Ports[0].HostIP = "0.0.0.0"
	p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "local", Image: "i", Ports: []v1.ContainerPort{{ContainerPort: 9, HostPort: 9090, HostIP: "127.0.0.1"}}})
	p.Spec.Containers[0].LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromInt(8080)}}}
	accepted(t, p, validation.Options{Level: model.LevelBaseline})
	accepted(t, p, validation.Options{Level: model.LevelBaseline, NodeIP: "192.0.2.7"})

	p.Spec.Containers[0].Ports[0].HostIP = "192.0.2.7"
	accepted(t, p, validation.Options{Level: model.LevelBaseline, NodeIP: "192.0.2.7"})

	p.Spec.Containers[0].Ports[0].HostIP = ""
	p.Spec.SecurityContext.RunAsNonRoot = ptr.To(true)
	for i := range p.Spec.Containers {
		c := &p.Spec.Containers[i]
		if c.SecurityContext == nil {
			c.SecurityContext = &v1.SecurityContext{}
		}
		c.SecurityContext.AllowPrivilegeEscalation = ptr.To(false)
		c.SecurityContext.Capabilities = &v1.Capabilities{Drop: []v1.Capability{"ALL"}, Add: []v1.Capability{"NET_BIND_SERVICE"}}
	}
	accepted(t, p, validation.Options{Level: model.LevelRestricted})

	// A trusted pod may run the local sandbox image (it is never pulled).
	sandbox := validPod()
	sandbox.Spec.Containers[0].Image = "berth/pause:1"
	accepted(t, sandbox, validation.Options{Level: model.LevelPrivileged})

	unsafe := validPod()
	unsafe.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}, {Name: "kernel.msgmax", Value: "8192"}}}
	accepted(t, unsafe, validation.Options{Level: model.LevelPrivileged, AllowedUnsafeSysctls: []string{"net.core.*", "kernel.msgmax"}})
}
