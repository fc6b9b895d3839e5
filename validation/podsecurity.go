package validation

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/pause"
)

// The Pod Security Standards as Pod Security Admission v1.37 enforces them
// (k8s.io/pod-security-admission/policy; test/psa checks berth against that
// evaluator), with one change: baseline's host ports are the source's
// host_ports range on an unspecified, loopback or the node's address,
// instead of none. Each refusal names the field and the level.

// baselineCapabilities may be added at baseline; restricted allows only
// NET_BIND_SERVICE.
var baselineCapabilities = []string{
	"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE",
	"SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}

// baselineSELinuxTypes are the SELinux types a baseline pod may ask for.
var baselineSELinuxTypes = []string{"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}

// restrictedVolumeTypes are the volume sources a restricted pod may use.
var restrictedVolumeTypes = []string{"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}

func (o Options) level() model.PodSecurityLevel {
	if o.Level == "" {
		return model.LevelBaseline
	}
	return o.Level
}

func (o Options) privileged() bool { return o.level() == model.LevelPrivileged }

// sandboxRepository is the sandbox image's repository that image names
// when the level is below privileged (a trusted pod may run the local
// sandbox image; it is never pulled for a pod).
func (o Options) sandboxRepository(image string) (string, bool) {
	if o.privileged() {
		return "", false
	}
	repos := o.SandboxRepositories
	if repos == nil {
		repos = pause.Reserved("")
	}
	return pause.ReservedRepository(image, repos)
}

func (o Options) hostPorts() model.PortRanges {
	if o.HostPorts == nil {
		return model.DefaultHostPorts
	}
	return o.HostPorts
}

// psViolation collects the refusals of one pod: each field and what the
// level forbids there.
type psViolation struct {
	level model.PodSecurityLevel
	opts  *Options
	errs  field.ErrorList
	// hostPorts counts the pod's host ports, for maxHostPorts.
	hostPorts int
}

func (v *psViolation) forbid(p *field.Path, control, detail string) {
	v.errs = append(v.errs, field.Forbidden(p, fmt.Sprintf("violates PodSecurity %q: %s (%s)", v.level, control, detail)))
}

// podSecurity checks pod against opts' Pod Security level; privileged
// checks nothing. Sysctls outside the safe set are checked for every level
// by validateSysctls.
func podSecurity(pod *v1.Pod, opts Options) field.ErrorList {
	if opts.privileged() {
		return nil
	}
	v := &psViolation{level: model.LevelBaseline, opts: &opts}
	v.baseline(pod)
	if opts.level() == model.LevelRestricted {
		v.level = model.LevelRestricted
		v.restricted(pod)
	}
	return v.errs
}

// containerPaths visits init and app containers with their field paths.
func containerPaths(spec *v1.PodSpec, visit func(c *v1.Container, p *field.Path)) {
	sp := field.NewPath("spec")
	for i := range spec.InitContainers {
		visit(&spec.InitContainers[i], sp.Child("initContainers").Index(i))
	}
	for i := range spec.Containers {
		visit(&spec.Containers[i], sp.Child("containers").Index(i))
	}
}

func (v *psViolation) baseline(pod *v1.Pod) {
	spec := &pod.Spec
	sp := field.NewPath("spec")
	for _, ns := range []struct {
		name string
		set  bool
	}{{"hostNetwork", spec.HostNetwork}, {"hostPID", spec.HostPID}, {"hostIPC", spec.HostIPC}} {
		if ns.set {
			v.forbid(sp.Child(ns.name), "host namespaces", "must not set "+ns.name+"=true")
		}
	}
	for i := range spec.Volumes {
		if spec.Volumes[i].HostPath != nil {
			v.forbid(sp.Child("volumes").Index(i).Child("hostPath"), "hostPath volumes", "must not use a hostPath volume")
		}
	}
	if psc := spec.SecurityContext; psc != nil {
		v.sharedControls(psc.WindowsOptions, psc.SELinuxOptions, psc.SeccompProfile, psc.AppArmorProfile, sp.Child("securityContext"))
	}
	v.annotations(pod)
	containerPaths(spec, func(c *v1.Container, p *field.Path) { v.baselineContainer(c, p) })
	if v.hostPorts > maxHostPorts {
		v.forbid(sp.Child("containers"), "hostPort", fmt.Sprintf("%d host ports; at most %d per pod (each costs the host a proxy and rules outside the pod's limits)", v.hostPorts, maxHostPorts))
	}
}

// sharedControls are the baseline controls of the fields pod and container
// security contexts share (the container's overrides the pod's, so both
// are judged): hostProcess, SELinux, seccomp and AppArmor.
func (v *psViolation) sharedControls(w *v1.WindowsSecurityContextOptions, se *v1.SELinuxOptions, sp *v1.SeccompProfile, ap *v1.AppArmorProfile, p *field.Path) {
	if w != nil && w.HostProcess != nil && *w.HostProcess {
		v.forbid(p.Child("windowsOptions", "hostProcess"), "hostProcess", "must not set hostProcess=true")
	}
	v.seLinux(se, p.Child("seLinuxOptions"))
	if sp != nil && sp.Type == v1.SeccompProfileTypeUnconfined {
		v.forbid(p.Child("seccompProfile", "type"), "seccompProfile", "must not set securityContext.seccompProfile.type to Unconfined")
	}
	v.appArmor(ap, p.Child("appArmorProfile"))
}

// maxHostPorts caps a baseline pod's host ports (berth's addition).
const maxHostPorts = 100

func (v *psViolation) baselineContainer(c *v1.Container, p *field.Path) {
	for i, port := range c.Ports {
		v.hostPort(port, p.Child("ports").Index(i))
	}
	v.probeHosts(c, p)
	sc := c.SecurityContext
	if sc == nil {
		return
	}
	scp := p.Child("securityContext")
	v.sharedControls(sc.WindowsOptions, sc.SELinuxOptions, sc.SeccompProfile, sc.AppArmorProfile, scp)
	if sc.Privileged != nil && *sc.Privileged {
		v.forbid(scp.Child("privileged"), "privileged", "must not set securityContext.privileged=true")
	}
	if caps := sc.Capabilities; caps != nil {
		for i, cp := range caps.Add {
			if !slices.Contains(baselineCapabilities, string(cp)) {
				v.forbid(scp.Child("capabilities", "add").Index(i), "non-default capabilities", fmt.Sprintf("must not include %q in securityContext.capabilities.add", cp))
			}
		}
	}
	if pm := sc.ProcMount; pm != nil && *pm != v1.DefaultProcMount {
		v.forbid(scp.Child("procMount"), "procMount", fmt.Sprintf("must not set securityContext.procMount to %q", *pm))
	}
}

// hostPort allows a baseline pod the source's host ports on an unspecified,
// a loopback (less exposed than unspecified, which covers loopback too) or
// the node's own address.
func (v *psViolation) hostPort(port v1.ContainerPort, p *field.Path) {
	if port.HostPort == 0 {
		return
	}
	v.hostPorts++
	if ranges := v.opts.hostPorts(); !ranges.Contains(port.HostPort) {
		allowed := ranges.String()
		if allowed == "" {
			allowed = "none"
		}
		v.forbid(p.Child("hostPort"), "hostPort", fmt.Sprintf("%d is outside the source's host_ports %s", port.HostPort, allowed))
	}
	if ip := port.HostIP; ip != "" && !localIP(ip) && (v.opts.NodeIP == "" || ip != v.opts.NodeIP) {
		v.forbid(p.Child("hostIP"), "hostPort", fmt.Sprintf("hostIP %s is not the node's address; leave it empty", ip))
	}
}

func localIP(s string) bool {
	ip := net.ParseIP(s)
	return ip != nil && (ip.IsUnspecified() || ip.IsLoopback())
}

// probeHosts forbids probes and hooks aimed at another host than the pod:
// a host field, or a Host header that an HTTP client would send instead.
func (v *psViolation) probeHosts(c *v1.Container, p *field.Path) {
	check := func(get *v1.HTTPGetAction, tcp *v1.TCPSocketAction, hp *field.Path) {
		if get != nil {
			if get.Host != "" {
				v.forbid(hp.Child("httpGet", "host"), "probe or lifecycle host", fmt.Sprintf("must not set host %q: probes reach the pod's own IP", get.Host))
			}
			for i, h := range get.HTTPHeaders {
				if strings.EqualFold(h.Name, "host") {
					v.forbid(hp.Child("httpGet", "httpHeaders").Index(i).Child("name"), "probe or lifecycle host", "must not set a Host header")
				}
			}
		}
		if tcp != nil && tcp.Host != "" {
			v.forbid(hp.Child("tcpSocket", "host"), "probe or lifecycle host", fmt.Sprintf("must not set host %q: probes reach the pod's own IP", tcp.Host))
		}
	}
	for _, pr := range []struct {
		name  string
		probe *v1.Probe
	}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}} {
		if pr.probe != nil {
			check(pr.probe.HTTPGet, pr.probe.TCPSocket, p.Child(pr.name))
		}
	}
	if l := c.Lifecycle; l != nil {
		for _, h := range []struct {
			name    string
			handler *v1.LifecycleHandler
		}{{"postStart", l.PostStart}, {"preStop", l.PreStop}} {
			if h.handler != nil {
				check(h.handler.HTTPGet, h.handler.TCPSocket, p.Child("lifecycle", h.name))
			}
		}
	}
}

func (v *psViolation) seLinux(se *v1.SELinuxOptions, p *field.Path) {
	if se == nil {
		return
	}
	if !slices.Contains(baselineSELinuxTypes, se.Type) {
		v.forbid(p.Child("type"), "seLinuxOptions", fmt.Sprintf("must not set type %q", se.Type))
	}
	if se.User != "" {
		v.forbid(p.Child("user"), "seLinuxOptions", "must not set user")
	}
	if se.Role != "" {
		v.forbid(p.Child("role"), "seLinuxOptions", "must not set role")
	}
}

func (v *psViolation) appArmor(ap *v1.AppArmorProfile, p *field.Path) {
	if ap != nil && ap.Type != v1.AppArmorProfileTypeRuntimeDefault && ap.Type != v1.AppArmorProfileTypeLocalhost {
		v.forbid(p.Child("type"), "appArmorProfile", fmt.Sprintf("must not set AppArmor profile type to %q", ap.Type))
	}
	// berth's addition: the engine reads the Localhost name "unconfined" as
	// no profile at all.
	if ap != nil && ap.Type == v1.AppArmorProfileTypeLocalhost && ap.LocalhostProfile != nil && strings.EqualFold(*ap.LocalhostProfile, "unconfined") {
		v.forbid(p.Child("localhostProfile"), "appArmorProfile", `must not name the Localhost profile "unconfined"`)
	}
}

// annotations checks the deprecated AppArmor annotations, which Pod
// Security Admission still judges (its seccomp ones it ignores since 1.19).
func (v *psViolation) annotations(pod *v1.Pod) {
	ap := field.NewPath("metadata", "annotations")
	for _, k := range slices.Sorted(maps.Keys(pod.Annotations)) {
		val := pod.Annotations[k]
		switch {
		case strings.HasPrefix(k, v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix):
			if val != "" && val != v1.DeprecatedAppArmorBetaProfileRuntimeDefault && !strings.HasPrefix(val, v1.DeprecatedAppArmorBetaProfileNamePrefix) {
				v.forbid(ap.Key(k), "appArmorProfile", fmt.Sprintf("must not set %s=%q", k, val))
			}
		}
	}
}

func (v *psViolation) restricted(pod *v1.Pod) {
	spec := &pod.Spec
	sp := field.NewPath("spec")
	for i := range spec.Volumes {
		if t := setVolumeTypes(&spec.Volumes[i].VolumeSource); len(t) == 1 && !slices.Contains(restrictedVolumeTypes, t[0]) && t[0] != "hostPath" {
			v.forbid(sp.Child("volumes").Index(i).Child(t[0]), "restricted volume types", fmt.Sprintf("must not use a %s volume", t[0]))
		}
	}
	psc := spec.SecurityContext
	if psc == nil {
		psc = &v1.PodSecurityContext{}
	}
	pp := sp.Child("securityContext")
	if psc.RunAsNonRoot != nil && !*psc.RunAsNonRoot {
		v.forbid(pp.Child("runAsNonRoot"), "runAsNonRoot != true", "pod must not set securityContext.runAsNonRoot=false")
	}
	if psc.RunAsUser != nil && *psc.RunAsUser == 0 {
		v.forbid(pp.Child("runAsUser"), "runAsUser=0", "pod must not set runAsUser=0")
	}
	podSeccomp := psc.SeccompProfile != nil && restrictedSeccomp(psc.SeccompProfile.Type)
	podNonRoot := psc.RunAsNonRoot != nil && *psc.RunAsNonRoot
	containerPaths(spec, func(c *v1.Container, p *field.Path) {
		sc := c.SecurityContext
		if sc == nil {
			sc = &v1.SecurityContext{}
		}
		scp := p.Child("securityContext")
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			v.forbid(scp.Child("allowPrivilegeEscalation"), "allowPrivilegeEscalation != false", "must set securityContext.allowPrivilegeEscalation=false")
		}
		switch {
		case sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot:
			v.forbid(scp.Child("runAsNonRoot"), "runAsNonRoot != true", "must not set securityContext.runAsNonRoot=false")
		case sc.RunAsNonRoot == nil && !podNonRoot:
			v.forbid(scp.Child("runAsNonRoot"), "runAsNonRoot != true", "pod or container must set securityContext.runAsNonRoot=true")
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			v.forbid(scp.Child("runAsUser"), "runAsUser=0", "must not set runAsUser=0")
		}
		switch {
		case sc.SeccompProfile != nil && !restrictedSeccomp(sc.SeccompProfile.Type):
			if sc.SeccompProfile.Type != v1.SeccompProfileTypeUnconfined { // already refused by baseline
				v.forbid(scp.Child("seccompProfile", "type"), "seccompProfile", fmt.Sprintf("must not set securityContext.seccompProfile.type to %q", sc.SeccompProfile.Type))
			}
		case sc.SeccompProfile == nil && !podSeccomp:
			v.forbid(scp.Child("seccompProfile", "type"), "seccompProfile", `pod or container must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`)
		}
		var drop, add []v1.Capability
		if sc.Capabilities != nil {
			drop, add = sc.Capabilities.Drop, sc.Capabilities.Add
		}
		if !slices.Contains(drop, "ALL") {
			v.forbid(scp.Child("capabilities", "drop"), "unrestricted capabilities", `must set securityContext.capabilities.drop=["ALL"]`)
		}
		for i, cp := range add {
			if cp != "NET_BIND_SERVICE" && slices.Contains(baselineCapabilities, string(cp)) {
				v.forbid(scp.Child("capabilities", "add").Index(i), "unrestricted capabilities", fmt.Sprintf("must not include %q in securityContext.capabilities.add", cp))
			}
		}
	})
}

func restrictedSeccomp(t v1.SeccompProfileType) bool {
	return t == v1.SeccompProfileTypeRuntimeDefault || t == v1.SeccompProfileTypeLocalhost
}
