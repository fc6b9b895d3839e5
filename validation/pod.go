package validation

import (
	"fmt"
	"net"
	"path"
	"reflect"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/berth-dev/berth/model"
)

// Pod checks a defaulted pod against what berth can run and what opts
// allow, and returns every problem with its JSON field path. It does not
// modify the pod.
//
// Rules: metadata.name is a DNS-1123 subdomain and namespace a DNS-1123
// label; at least one container; container names are DNS-1123 labels, unique
// across init and app containers, and not "POD"; image is required; ports are
// 1-65535 with protocol TCP, UDP or SCTP, and a (hostIP, protocol, hostPort)
// is claimed once per pod; volumes have unique names and are hostPath (with
// an absolute path) or emptyDir only; mounts name a volume and use an absolute
// mountPath; restartPolicy is Always, OnFailure or Never; resource quantities
// are nonnegative with requests not above limits; the grace period is not
// negative; each probe and lifecycle hook has exactly one handler. Every set
// field that podFields classes refused is Forbidden by name; the values of
// the mapped fields (fields.go) are checked in spec.go. metadata.uid
// is a UUID or a DNS-1123 label (it names the pod's directory on the host);
// at most opts.MaxContainers containers. opts.Level's Pod Security profile
// is enforced by podSecurity, the sysctl rules by validateSysctls.
func Pod(pod *v1.Pod, opts Options) field.ErrorList {
	meta := field.NewPath("metadata")
	errs := validateMeta(&pod.ObjectMeta)
	errs = append(errs, UID(pod.UID, meta.Child("uid"))...)

	spec := &pod.Spec
	sp := field.NewPath("spec")
	all := map[string]bool{}
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		all[c.Name] = true
	}
	volumes, verrs := validateVolumes(spec.Volumes, sp.Child("volumes"), all)
	errs = append(errs, verrs...)

	v := &podValidator{opts: opts, spec: spec, volumes: volumes, names: map[string]bool{}, all: all}
	for i := range spec.InitContainers {
		errs = append(errs, v.container(&spec.InitContainers[i], sp.Child("initContainers").Index(i), true)...)
	}
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(sp.Child("containers"), "must have at least one container"))
	}
	if n, limit := len(spec.InitContainers)+len(spec.Containers), opts.ContainerLimit(); n > limit {
		errs = append(errs, field.TooMany(sp.Child("containers"), n, limit))
	}
	for i := range spec.Containers {
		errs = append(errs, v.container(&spec.Containers[i], sp.Child("containers").Index(i), false)...)
	}
	errs = append(errs, refusedFields(spec)...)
	errs = append(errs, validatePodLevel(spec, sp)...)

	policies := []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}
	if !slices.Contains(policies, spec.RestartPolicy) {
		errs = append(errs, field.NotSupported(sp.Child("restartPolicy"), spec.RestartPolicy, policies))
	}
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		errs = append(errs, field.Invalid(sp.Child("terminationGracePeriodSeconds"), *g, "must be greater than or equal to 0"))
	}
	errs = append(errs, validateSysctls(spec, opts)...)
	errs = append(errs, podSecurity(pod, opts)...)
	return errs
}

// UID accepts an empty UID (defaulted later), a UUID or a DNS-1123 label:
// one path element, as the pod's directory root_dir/pods/<uid>.
func UID(uid types.UID, p *field.Path) field.ErrorList {
	if uid == "" || model.ValidPodUID(string(uid)) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, string(uid), "must be a UUID or a DNS-1123 label: it names the pod's directory on the host")}
}

// volumeTypes are the volume sources berth supports.
var volumeTypes = []string{"hostPath", "emptyDir", "configMap", "secret", "projected", "downwardAPI", "persistentVolumeClaim"}

var hostPathTypes = []v1.HostPathType{
	v1.HostPathUnset, v1.HostPathDirectoryOrCreate, v1.HostPathDirectory, v1.HostPathFileOrCreate,
	v1.HostPathFile, v1.HostPathSocket, v1.HostPathCharDev, v1.HostPathBlockDev,
}

func validateVolumes(vols []v1.Volume, vp *field.Path, containers map[string]bool) (map[string]bool, field.ErrorList) {
	var errs field.ErrorList
	names := map[string]bool{}
	for i := range vols {
		vol := &vols[i]
		p := vp.Index(i)
		switch {
		case vol.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case names[vol.Name]:
			errs = append(errs, field.Duplicate(p.Child("name"), vol.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(vol.Name) {
				errs = append(errs, field.Invalid(p.Child("name"), vol.Name, msg))
			}
		}
		names[vol.Name] = true

		types := setVolumeTypes(&vol.VolumeSource)
		switch {
		case len(types) == 0:
			errs = append(errs, field.Required(p, "must specify a volume type"))
			continue
		case len(types) > 1:
			errs = append(errs, field.Forbidden(p.Child(types[1]), "may not specify more than 1 volume type"))
			continue
		case !slices.Contains(volumeTypes, types[0]):
			continue // refused by podFields
		}
		if slices.Contains(projectionVolumes, types[0]) {
			errs = append(errs, validateProjection(vol, p, containers)...)
		}
		if c := vol.PersistentVolumeClaim; c != nil {
			errs = append(errs, validateClaimSource(c, p)...)
		}
		if hp := vol.HostPath; hp != nil {
			hpp := p.Child("hostPath")
			errs = append(errs, absolutePath(hp.Path, hpp.Child("path"))...)
			if hp.Type != nil && !slices.Contains(hostPathTypes, *hp.Type) {
				errs = append(errs, field.NotSupported(hpp.Child("type"), *hp.Type, hostPathTypes))
			}
		}
		if ed := vol.EmptyDir; ed != nil {
			media := []v1.StorageMedium{v1.StorageMediumDefault, v1.StorageMediumMemory}
			if !slices.Contains(media, ed.Medium) {
				errs = append(errs, field.NotSupported(p.Child("emptyDir", "medium"), ed.Medium, media))
			}
			if ed.SizeLimit != nil && ed.SizeLimit.Sign() < 0 {
				errs = append(errs, field.Invalid(p.Child("emptyDir", "sizeLimit"), ed.SizeLimit.String(), "must be greater than or equal to 0"))
			}
			if ed.Mode != nil && (*ed.Mode < 0 || *ed.Mode > 0o1777) {
				errs = append(errs, field.Invalid(p.Child("emptyDir", "mode"), *ed.Mode, "must be a number between 0 and 01777 (octal), both inclusive"))
			}
		}
	}
	return names, errs
}

// setVolumeTypes returns the JSON names of the volume types set in vs.
func setVolumeTypes(vs *v1.VolumeSource) []string {
	var set []string
	rv := reflect.ValueOf(vs).Elem()
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Field(i)
		if f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
			set = append(set, name)
		}
	}
	return set
}

func absolutePath(p string, fp *field.Path) field.ErrorList {
	switch {
	case p == "":
		return field.ErrorList{field.Required(fp, "")}
	case !path.IsAbs(p):
		return field.ErrorList{field.Invalid(fp, p, "must be an absolute path")}
	}
	return nil
}

type hostPortKey struct {
	protocol v1.Protocol
	port     int32
}

type podValidator struct {
	opts    Options
	spec    *v1.PodSpec
	volumes map[string]bool
	names   map[string]bool          // container names seen
	all     map[string]bool          // names of all the pod's containers
	hostIPs map[hostPortKey][]string // host IPs claimed per protocol/port
}

func (v *podValidator) container(c *v1.Container, p *field.Path, init bool) field.ErrorList {
	var errs field.ErrorList
	switch {
	case c.Name == "":
		errs = append(errs, field.Required(p.Child("name"), ""))
	case c.Name == "POD":
		errs = append(errs, field.Invalid(p.Child("name"), c.Name, "is reserved for the pod sandbox"))
	case v.names[c.Name]:
		errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
	default:
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
		}
	}
	v.names[c.Name] = true

	if strings.TrimSpace(c.Image) == "" {
		errs = append(errs, field.Required(p.Child("image"), ""))
	} else if strings.TrimSpace(c.Image) != c.Image {
		errs = append(errs, field.Invalid(p.Child("image"), c.Image, "must not have leading or trailing whitespace"))
	} else if repo, ok := v.opts.sandboxRepository(c.Image); ok {
		errs = append(errs, field.Forbidden(p.Child("image"), fmt.Sprintf("%s is the pod sandbox image's repository: only privileged pods may name it (a pull would replace every later sandbox's image)", repo)))
	}
	pulls := []v1.PullPolicy{v1.PullAlways, v1.PullIfNotPresent, v1.PullNever}
	if !slices.Contains(pulls, c.ImagePullPolicy) {
		errs = append(errs, field.NotSupported(p.Child("imagePullPolicy"), c.ImagePullPolicy, pulls))
	}

	errs = append(errs, v.ports(c.Ports, p.Child("ports"))...)
	errs = append(errs, v.env(c, p)...)
	errs = append(errs, v.mounts(c, p.Child("volumeMounts"))...)
	errs = append(errs, validateResources(&c.Resources, p.Child("resources"))...)
	errs = append(errs, validateTermination(c, p)...)
	errs = append(errs, validateContainerRestart(c, p, init)...)
	// A regular init container runs to completion: no probe, no hook.
	regularInit := init && !model.IsSidecar(c)

	probes := []struct {
		name    string
		probe   *v1.Probe
		oneShot bool // successThreshold must be 1
	}{
		{"livenessProbe", c.LivenessProbe, true},
		{"readinessProbe", c.ReadinessProbe, false},
		{"startupProbe", c.StartupProbe, true},
	}
	for _, pr := range probes {
		if pr.probe == nil {
			continue
		}
		if regularInit {
			errs = append(errs, field.Forbidden(p.Child(pr.name), initForbidden))
			continue
		}
		errs = append(errs, validateProbe(pr.probe, p.Child(pr.name), pr.oneShot)...)
	}
	if l := c.Lifecycle; l != nil {
		if regularInit {
			errs = append(errs, field.Forbidden(p.Child("lifecycle"), initForbidden))
		} else {
			if l.PostStart != nil {
				errs = append(errs, validateLifecycleHandler(l.PostStart, p.Child("lifecycle", "postStart"))...)
			}
			if l.PreStop != nil {
				errs = append(errs, validateLifecycleHandler(l.PreStop, p.Child("lifecycle", "preStop"))...)
			}
			if l.StopSignal != nil && !slices.Contains(stopSignals, *l.StopSignal) {
				errs = append(errs, field.NotSupported(p.Child("lifecycle", "stopSignal"), *l.StopSignal, stopSignals))
			}
		}
	}

	if sc := c.SecurityContext; sc != nil {
		errs = append(errs, v.containerSecurity(sc, p.Child("securityContext"))...)
	}
	return errs
}

var protocols = []v1.Protocol{v1.ProtocolTCP, v1.ProtocolUDP, v1.ProtocolSCTP}

func (v *podValidator) ports(ports []v1.ContainerPort, pp *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for i, port := range ports {
		p := pp.Index(i)
		if port.Name != "" {
			for _, msg := range validation.IsValidPortName(port.Name) {
				errs = append(errs, field.Invalid(p.Child("name"), port.Name, msg))
			}
			if names[port.Name] {
				errs = append(errs, field.Duplicate(p.Child("name"), port.Name))
			}
			names[port.Name] = true
		}
		if port.ContainerPort == 0 {
			errs = append(errs, field.Required(p.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				errs = append(errs, field.Invalid(p.Child("containerPort"), port.ContainerPort, msg))
			}
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				errs = append(errs, field.Invalid(p.Child("hostPort"), port.HostPort, msg))
			}
		}
		if !slices.Contains(protocols, port.Protocol) {
			errs = append(errs, field.NotSupported(p.Child("protocol"), port.Protocol, protocols))
		}
		if port.HostIP != "" && net.ParseIP(port.HostIP) == nil {
			errs = append(errs, field.Invalid(p.Child("hostIP"), port.HostIP, "must be a valid IP address"))
		}
		if v.spec.HostNetwork && port.HostPort != port.ContainerPort {
			errs = append(errs, field.Invalid(p.Child("hostPort"), port.HostPort, "must match containerPort when hostNetwork is true"))
		}
		if port.HostPort > 0 {
			errs = append(errs, v.claimHostPort(port, p.Child("hostPort"))...)
		}
	}
	return errs
}

// claimHostPort records a host port; an unspecified host IP conflicts with
// every address.
func (v *podValidator) claimHostPort(port v1.ContainerPort, p *field.Path) field.ErrorList {
	if v.hostIPs == nil {
		v.hostIPs = map[hostPortKey][]string{}
	}
	k := hostPortKey{port.Protocol, port.HostPort}
	ip := port.HostIP
	if ip == "" || ip == "0.0.0.0" || ip == "::" {
		ip = ""
	}
	for _, other := range v.hostIPs[k] {
		if other == "" || ip == "" || other == ip {
			return field.ErrorList{field.Duplicate(p, fmt.Sprintf("%s/%d on %s", port.Protocol, port.HostPort, displayIP(port.HostIP)))}
		}
	}
	v.hostIPs[k] = append(v.hostIPs[k], ip)
	return nil
}

func displayIP(ip string) string {
	if ip == "" {
		return "0.0.0.0"
	}
	return ip
}

func (v *podValidator) env(c *v1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, e := range c.Env {
		ep := p.Child("env").Index(i)
		switch {
		case e.Name == "":
			errs = append(errs, field.Required(ep.Child("name"), ""))
		case strings.ContainsAny(e.Name, "=\x00"):
			errs = append(errs, field.Invalid(ep.Child("name"), e.Name, "must not contain '=' or NUL"))
		}
		if e.ValueFrom != nil {
			errs = append(errs, v.valueFrom(&e, ep)...)
		}
	}
	errs = append(errs, validateEnvFrom(c, p)...)
	return errs
}

func (v *podValidator) mounts(c *v1.Container, mp *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := map[string]bool{}
	for i, m := range c.VolumeMounts {
		p := mp.Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else if !v.volumes[m.Name] {
			errs = append(errs, field.NotFound(p.Child("name"), m.Name))
		}
		errs = append(errs, absolutePath(m.MountPath, p.Child("mountPath"))...)
		if m.MountPath != "" && paths[path.Clean(m.MountPath)] {
			errs = append(errs, field.Duplicate(p.Child("mountPath"), m.MountPath))
		}
		paths[path.Clean(m.MountPath)] = true
		for _, sub := range []struct{ name, value string }{{"subPath", m.SubPath}, {"subPathExpr", m.SubPathExpr}} {
			if sub.value != "" && (path.IsAbs(sub.value) || slices.Contains(strings.Split(sub.value, "/"), "..")) {
				errs = append(errs, field.Invalid(p.Child(sub.name), sub.value, "must be a relative path without '..'"))
			}
		}
		if m.SubPath != "" && m.SubPathExpr != "" {
			errs = append(errs, field.Invalid(p.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
		}
		errs = append(errs, validatePropagation(c, &m, p)...)
	}
	return errs
}

func validateResources(r *v1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []struct {
		name string
		rl   v1.ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		for _, name := range sortedResourceNames(list.rl) {
			if why := unsupportedResource(name); why != "" {
				errs = append(errs, notSupported(p.Child(list.name).Key(string(name)), why))
				continue
			}
			q := list.rl[name]
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(p.Child(list.name).Key(string(name)), q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	for _, name := range sortedResourceNames(r.Requests) {
		req := r.Requests[name]
		lim, ok := r.Limits[name]
		if ok && req.Cmp(lim) > 0 {
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), req.String(),
				fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
		}
	}
	return errs
}

func sortedResourceNames(rl v1.ResourceList) []v1.ResourceName {
	names := make([]v1.ResourceName, 0, len(rl))
	for n := range rl {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func validateProbe(pr *v1.Probe, p *field.Path, oneShot bool) field.ErrorList {
	h := &pr.ProbeHandler
	errs := validateActions(h.Exec, h.HTTPGet, h.TCPSocket, "grpc", h.GRPC != nil, p)
	if h.GRPC != nil {
		errs = append(errs, validateGRPC(h.GRPC, p.Child("grpc"))...)
	}
	for _, n := range []struct {
		name  string
		value int32
		min   int32
	}{
		{"initialDelaySeconds", pr.InitialDelaySeconds, 0},
		{"timeoutSeconds", pr.TimeoutSeconds, 1},
		{"periodSeconds", pr.PeriodSeconds, 1},
		{"successThreshold", pr.SuccessThreshold, 1},
		{"failureThreshold", pr.FailureThreshold, 1},
	} {
		if n.value < n.min {
			errs = append(errs, field.Invalid(p.Child(n.name), n.value, fmt.Sprintf("must be greater than or equal to %d", n.min)))
		}
	}
	if oneShot && pr.SuccessThreshold != 1 {
		errs = append(errs, field.Invalid(p.Child("successThreshold"), pr.SuccessThreshold, "must be 1"))
	}
	if g := pr.TerminationGracePeriodSeconds; g != nil && *g <= 0 {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), *g, "must be greater than 0"))
	}
	return errs
}

func validateLifecycleHandler(h *v1.LifecycleHandler, p *field.Path) field.ErrorList {
	errs := validateActions(h.Exec, h.HTTPGet, h.TCPSocket, "sleep", h.Sleep != nil, p)
	if h.Sleep != nil && h.Sleep.Seconds < 0 {
		errs = append(errs, field.Invalid(p.Child("sleep", "seconds"), h.Sleep.Seconds, "must be greater than or equal to 0"))
	}
	return errs
}

// validateActions checks the actions probes and lifecycle hooks share, and
// that exactly one action is set; extra names the kind's own action.
func validateActions(exec *v1.ExecAction, get *v1.HTTPGetAction, tcp *v1.TCPSocketAction, extra string, extraSet bool, p *field.Path) field.ErrorList {
	var set []string
	for _, a := range []struct {
		name string
		ok   bool
	}{{"exec", exec != nil}, {"httpGet", get != nil}, {"tcpSocket", tcp != nil}, {extra, extraSet}} {
		if a.ok {
			set = append(set, a.name)
		}
	}
	errs := handlerCount(set, p)
	if exec != nil {
		errs = append(errs, validateExec(exec, p.Child("exec"))...)
	}
	if get != nil {
		errs = append(errs, validateHTTPGet(get, p.Child("httpGet"))...)
	}
	if tcp != nil {
		errs = append(errs, validatePort(tcp.Port, p.Child("tcpSocket", "port"))...)
	}
	return errs
}

func handlerCount(set []string, p *field.Path) field.ErrorList {
	switch len(set) {
	case 0:
		return field.ErrorList{field.Required(p, "must specify a handler type")}
	case 1:
		return nil
	}
	return field.ErrorList{field.Forbidden(p.Child(set[1]), "may not specify more than 1 handler type")}
}

func validateExec(e *v1.ExecAction, p *field.Path) field.ErrorList {
	if len(e.Command) == 0 {
		return field.ErrorList{field.Required(p.Child("command"), "")}
	}
	return nil
}

func validateHTTPGet(h *v1.HTTPGetAction, p *field.Path) field.ErrorList {
	errs := validatePort(h.Port, p.Child("port"))
	schemes := []v1.URIScheme{v1.URISchemeHTTP, v1.URISchemeHTTPS}
	if !slices.Contains(schemes, h.Scheme) {
		errs = append(errs, field.NotSupported(p.Child("scheme"), h.Scheme, schemes))
	}
	switch {
	case h.Protocol == nil || *h.Protocol == v1.HTTPProtocolHTTP1:
	case *h.Protocol == v1.HTTPProtocolHTTP2:
		errs = append(errs, notSupported(p.Child("protocol"), "HTTP/2 probes are not implemented"))
	default:
		errs = append(errs, field.NotSupported(p.Child("protocol"), *h.Protocol, []v1.HTTPProtocol{v1.HTTPProtocolHTTP1, v1.HTTPProtocolHTTP2}))
	}
	return errs
}

func validatePort(port intstr.IntOrString, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if port.Type == intstr.String {
		for _, msg := range validation.IsValidPortName(port.StrVal) {
			errs = append(errs, field.Invalid(p, port.StrVal, msg))
		}
		return errs
	}
	for _, msg := range validation.IsValidPortNum(port.IntValue()) {
		errs = append(errs, field.Invalid(p, port.IntVal, msg))
	}
	return errs
}
