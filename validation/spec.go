package validation

import (
	"net"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/berth-dev/berth/model"
)

// The values berth accepts in the mapped fields, checked with the API
// server's limits.

var dnsPolicies = []v1.DNSPolicy{v1.DNSClusterFirst, v1.DNSClusterFirstWithHostNet, v1.DNSDefault, v1.DNSNone}

const (
	maxDNSNameservers = 3
	maxDNSSearches    = 32
	maxDNSSearchChars = 2048
)

// validatePodLevel checks activeDeadlineSeconds, DNS, hostAliases, the pod
// security context, hostUsers, os (admission compares it with the node's),
// node selection and pod-level resources.
func validatePodLevel(spec *v1.PodSpec, sp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if d := spec.ActiveDeadlineSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(sp.Child("activeDeadlineSeconds"), *d, "must be greater than 0"))
	}
	for _, h := range []struct {
		name, value string
	}{{"hostname", spec.Hostname}, {"subdomain", spec.Subdomain}} {
		if h.value == "" {
			continue
		}
		for _, msg := range validation.IsDNS1123Label(h.value) {
			errs = append(errs, field.Invalid(sp.Child(h.name), h.value, msg))
		}
	}
	if spec.DNSPolicy != "" && !slices.Contains(dnsPolicies, spec.DNSPolicy) {
		errs = append(errs, field.NotSupported(sp.Child("dnsPolicy"), spec.DNSPolicy, dnsPolicies))
	}
	if spec.DNSPolicy == v1.DNSNone && (spec.DNSConfig == nil || len(spec.DNSConfig.Nameservers) == 0) {
		errs = append(errs, field.Required(sp.Child("dnsConfig", "nameservers"), "must provide at least one DNS nameserver when dnsPolicy is None"))
	}
	if dc := spec.DNSConfig; dc != nil {
		errs = append(errs, validateDNSConfig(dc, sp.Child("dnsConfig"))...)
	}
	for i, ha := range spec.HostAliases {
		hp := sp.Child("hostAliases").Index(i)
		if net.ParseIP(ha.IP) == nil {
			errs = append(errs, field.Invalid(hp.Child("ip"), ha.IP, "must be a valid IP address"))
		}
		if len(ha.Hostnames) == 0 {
			errs = append(errs, field.Required(hp.Child("hostnames"), ""))
		}
		for j, h := range ha.Hostnames {
			for _, msg := range validation.IsDNS1123Subdomain(h) {
				errs = append(errs, field.Invalid(hp.Child("hostnames").Index(j), h, msg))
			}
		}
	}
	if sc := spec.SecurityContext; sc != nil {
		errs = append(errs, validatePodSecurity(sc, sp.Child("securityContext"))...)
	}
	if spec.HostUsers != nil && !*spec.HostUsers {
		errs = append(errs, notSupported(sp.Child("hostUsers"), "user namespaces are set for the whole Docker daemon"))
	}
	if os := spec.OS; os != nil {
		switch os.Name {
		case v1.Linux, v1.Windows:
		case "":
			errs = append(errs, field.Required(sp.Child("os", "name"), ""))
		default:
			errs = append(errs, field.NotSupported(sp.Child("os", "name"), os.Name, []v1.OSName{v1.Linux, v1.Windows}))
		}
	}
	errs = append(errs, validateNodeSelection(spec, sp)...)
	errs = append(errs, validatePodResources(spec, sp)...)
	return errs
}

func validateDNSConfig(dc *v1.PodDNSConfig, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(dc.Nameservers) > maxDNSNameservers {
		errs = append(errs, field.Invalid(p.Child("nameservers"), dc.Nameservers, "must not have more than 3 nameservers"))
	}
	for i, ns := range dc.Nameservers {
		if net.ParseIP(ns) == nil {
			errs = append(errs, field.Invalid(p.Child("nameservers").Index(i), ns, "must be a valid IP address"))
		}
	}
	if len(dc.Searches) > maxDNSSearches {
		errs = append(errs, field.Invalid(p.Child("searches"), dc.Searches, "must not have more than 32 search paths"))
	}
	if n := len(strings.Join(dc.Searches, " ")); n > maxDNSSearchChars {
		errs = append(errs, field.Invalid(p.Child("searches"), dc.Searches, "must not have more than 2048 characters (including spaces) in the search list"))
	}
	for i, s := range dc.Searches {
		for _, msg := range validation.IsDNS1123Subdomain(strings.TrimSuffix(s, ".")) {
			errs = append(errs, field.Invalid(p.Child("searches").Index(i), s, msg))
		}
	}
	for i, o := range dc.Options {
		op := p.Child("options").Index(i)
		switch {
		case o.Name == "":
			errs = append(errs, field.Required(op.Child("name"), "must not be empty"))
		case !resolvToken.MatchString(o.Name):
			errs = append(errs, field.Invalid(op.Child("name"), o.Name, "must be printable, without spaces (it is a resolv.conf option)"))
		}
		if o.Value != nil && *o.Value != "" && !resolvToken.MatchString(*o.Value) {
			errs = append(errs, field.Invalid(op.Child("value"), *o.Value, "must be printable, without spaces (it is a resolv.conf option)"))
		}
	}
	return errs
}

// resolvToken is one word of a resolv.conf line.
var resolvToken = regexp.MustCompile(`^[!-~]+$`)

// sysctlName is the API server's sysctl name pattern (dots or slashes).
var sysctlName = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

func validatePodSecurity(sc *v1.PodSecurityContext, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for i, s := range sc.Sysctls {
		sp := p.Child("sysctls").Index(i).Child("name")
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(sp, ""))
		case len(s.Name) > 253 || !sysctlName.MatchString(s.Name):
			errs = append(errs, field.Invalid(sp, s.Name, "must be a valid sysctl name (lowercase segments separated by '.' or '/')"))
		case names[s.Name]:
			errs = append(errs, field.Duplicate(sp, s.Name))
		}
		names[s.Name] = true
	}
	if sgp := sc.SupplementalGroupsPolicy; sgp != nil {
		switch *sgp {
		case v1.SupplementalGroupsPolicyMerge:
		case v1.SupplementalGroupsPolicyStrict:
			errs = append(errs, notSupported(p.Child("supplementalGroupsPolicy"), "Strict is not implemented; Docker merges the image's groups"))
		default:
			errs = append(errs, field.NotSupported(p.Child("supplementalGroupsPolicy"), *sgp,
				[]v1.SupplementalGroupsPolicy{v1.SupplementalGroupsPolicyMerge, v1.SupplementalGroupsPolicyStrict}))
		}
	}
	errs = append(errs, validateProfiles(sc.SeccompProfile, sc.AppArmorProfile, p)...)
	return errs
}

func (v *podValidator) containerSecurity(sc *v1.SecurityContext, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pm := sc.ProcMount; pm != nil {
		switch *pm {
		case v1.DefaultProcMount:
		case v1.UnmaskedProcMount:
		default:
			errs = append(errs, field.NotSupported(p.Child("procMount"), *pm, []v1.ProcMountType{v1.DefaultProcMount, v1.UnmaskedProcMount}))
		}
	}
	return append(errs, validateProfiles(sc.SeccompProfile, sc.AppArmorProfile, p)...)
}

// appArmorName is what a profile name handed to the engine may hold: the
// kernel trims spaces and stops at NUL, so "unconfined " would be
// unconfined.
var appArmorName = regexp.MustCompile(`^[!-~]+$`)

// validateProfiles checks seccomp and AppArmor profiles: a Localhost type
// needs localhostProfile, other types forbid it.
func validateProfiles(sp *v1.SeccompProfile, ap *v1.AppArmorProfile, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sp != nil {
		types := []v1.SeccompProfileType{v1.SeccompProfileTypeRuntimeDefault, v1.SeccompProfileTypeUnconfined, v1.SeccompProfileTypeLocalhost}
		errs = append(errs, validateProfile(string(sp.Type), sp.LocalhostProfile, types, p.Child("seccompProfile"))...)
		if lp := sp.LocalhostProfile; lp != nil && *lp != "" && !filepath.IsLocal(*lp) {
			errs = append(errs, field.Invalid(p.Child("seccompProfile", "localhostProfile"), *lp, "must be a relative path without '..' (a file under root_dir/seccomp)"))
		}
	}
	if ap != nil {
		types := []v1.AppArmorProfileType{v1.AppArmorProfileTypeRuntimeDefault, v1.AppArmorProfileTypeUnconfined, v1.AppArmorProfileTypeLocalhost}
		errs = append(errs, validateProfile(string(ap.Type), ap.LocalhostProfile, types, p.Child("appArmorProfile"))...)
		if lp := ap.LocalhostProfile; lp != nil && *lp != "" && !appArmorName.MatchString(*lp) {
			errs = append(errs, field.Invalid(p.Child("appArmorProfile", "localhostProfile"), *lp, "must be a loaded profile's name: printable, without spaces or control characters"))
		}
	}
	return errs
}

func validateProfile[T ~string](typ string, localhost *string, types []T, p *field.Path) field.ErrorList {
	switch {
	case typ == "":
		return field.ErrorList{field.Required(p.Child("type"), "")}
	case !slices.Contains(types, T(typ)):
		return field.ErrorList{field.NotSupported(p.Child("type"), typ, types)}
	case typ == "Localhost" && (localhost == nil || *localhost == ""):
		return field.ErrorList{field.Required(p.Child("localhostProfile"), "must be set when the type is Localhost")}
	case typ != "Localhost" && localhost != nil:
		return field.ErrorList{field.Invalid(p.Child("localhostProfile"), *localhost, "can only be set when the type is Localhost")}
	}
	return nil
}

// downwardFieldPaths are the fieldRef paths berth resolves, besides
// metadata.labels['key'] and metadata.annotations['key'].
var downwardFieldPaths = []string{
	"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
	"status.podIP", "status.podIPs", "status.hostIP", "status.hostIPs",
}

var downwardResources = []string{
	"limits.cpu", "limits.memory", "limits.ephemeral-storage",
	"requests.cpu", "requests.memory", "requests.ephemeral-storage",
}

// valueFrom checks an env var's valueFrom: exactly one source, and what
// berth can resolve of each.
func (v *podValidator) valueFrom(e *v1.EnvVar, ep *field.Path) field.ErrorList {
	var errs field.ErrorList
	vf, p := e.ValueFrom, ep.Child("valueFrom")
	if e.Value != "" {
		errs = append(errs, field.Invalid(p, "", "may not be specified when `value` is not empty"))
	}
	n := 0
	for _, set := range []bool{vf.FieldRef != nil, vf.ResourceFieldRef != nil, vf.ConfigMapKeyRef != nil, vf.SecretKeyRef != nil, vf.FileKeyRef != nil} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		errs = append(errs, field.Invalid(p, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
	case n > 1:
		errs = append(errs, field.Invalid(p, "", "may not have more than one field specified at a time"))
	}
	if fr := vf.FieldRef; fr != nil {
		fp := p.Child("fieldRef")
		if fr.APIVersion != "" && fr.APIVersion != "v1" {
			errs = append(errs, field.NotSupported(fp.Child("apiVersion"), fr.APIVersion, []string{"v1"}))
		}
		errs = append(errs, validateDownwardPath(fr.FieldPath, fp.Child("fieldPath"))...)
	}
	if r := vf.ConfigMapKeyRef; r != nil {
		errs = append(errs, validateKeyRef(r.Name, r.Key, p.Child("configMapKeyRef"))...)
	}
	if r := vf.SecretKeyRef; r != nil {
		errs = append(errs, validateKeyRef(r.Name, r.Key, p.Child("secretKeyRef"))...)
	}
	if r := vf.FileKeyRef; r != nil {
		errs = append(errs, v.fileKeyRef(r, p.Child("fileKeyRef"))...)
	}
	if rf := vf.ResourceFieldRef; rf != nil {
		rp := p.Child("resourceFieldRef")
		if !slices.Contains(downwardResources, rf.Resource) {
			if rf.Resource == "" {
				errs = append(errs, field.Required(rp.Child("resource"), ""))
			} else {
				errs = append(errs, field.NotSupported(rp.Child("resource"), rf.Resource, downwardResources))
			}
		}
		if rf.ContainerName != "" && !v.all[rf.ContainerName] {
			errs = append(errs, field.NotFound(rp.Child("containerName"), rf.ContainerName))
		}
		if rf.Divisor.Sign() < 0 {
			errs = append(errs, field.Invalid(rp.Child("divisor"), rf.Divisor.String(), "must be greater than 0"))
		}
	}
	return errs
}

func validateDownwardPath(fp string, p *field.Path) field.ErrorList {
	if fp == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if slices.Contains(downwardFieldPaths, fp) {
		return nil
	}
	if _, key, ok := model.MetadataFieldRef(fp); ok {
		var errs field.ErrorList
		for _, msg := range validation.IsQualifiedName(strings.ToLower(key)) {
			errs = append(errs, field.Invalid(p, fp, msg))
		}
		return errs
	}
	return field.ErrorList{notSupported(p, "berth resolves "+strings.Join(downwardFieldPaths, ", ")+", metadata.labels['key'] and metadata.annotations['key']")}
}

var propagations = []v1.MountPropagationMode{v1.MountPropagationNone, v1.MountPropagationHostToContainer, v1.MountPropagationBidirectional}

var recursiveReadOnlyModes = []v1.RecursiveReadOnlyMode{v1.RecursiveReadOnlyDisabled, v1.RecursiveReadOnlyIfPossible, v1.RecursiveReadOnlyEnabled}

// validatePropagation checks mountPropagation (Bidirectional only for
// privileged containers) and recursiveReadOnly (IfPossible and Enabled need
// readOnly and no propagation) as the API server does.
func validatePropagation(c *v1.Container, m *v1.VolumeMount, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if mp := m.MountPropagation; mp != nil {
		privileged := c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged
		switch {
		case !slices.Contains(propagations, *mp):
			errs = append(errs, field.NotSupported(p.Child("mountPropagation"), *mp, propagations))
		case *mp == v1.MountPropagationBidirectional && !privileged:
			errs = append(errs, field.Forbidden(p.Child("mountPropagation"), "Bidirectional mount propagation is available only to privileged containers"))
		}
	}
	if rro := m.RecursiveReadOnly; rro != nil {
		rp := p.Child("recursiveReadOnly")
		switch {
		case !slices.Contains(recursiveReadOnlyModes, *rro):
			errs = append(errs, field.NotSupported(rp, *rro, recursiveReadOnlyModes))
		case *rro == v1.RecursiveReadOnlyDisabled:
		case !m.ReadOnly:
			errs = append(errs, field.Forbidden(rp, "may only be specified when readOnly is true"))
		case m.MountPropagation != nil && *m.MountPropagation != v1.MountPropagationNone:
			errs = append(errs, field.Forbidden(rp, "may only be specified when mountPropagation is None or not specified"))
		}
	}
	return errs
}

// unsupportedResource says why berth refuses a container resource name, or
// "" for cpu, memory and ephemeral-storage.
func unsupportedResource(name v1.ResourceName) string {
	switch {
	case name == v1.ResourceCPU || name == v1.ResourceMemory || name == v1.ResourceEphemeralStorage:
		return ""
	case strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix):
		return "hugepages are not implemented"
	}
	return "extended resources need a device plugin; berth supports cpu, memory and ephemeral-storage"
}

var terminationMessagePolicies = []v1.TerminationMessagePolicy{v1.TerminationMessageReadFile, v1.TerminationMessageFallbackToLogsOnError}

func validateTermination(c *v1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.TerminationMessagePolicy != "" && !slices.Contains(terminationMessagePolicies, c.TerminationMessagePolicy) {
		errs = append(errs, field.NotSupported(p.Child("terminationMessagePolicy"), c.TerminationMessagePolicy, terminationMessagePolicies))
	}
	if tm := c.TerminationMessagePath; tm != "" && !path.IsAbs(tm) {
		errs = append(errs, field.Invalid(p.Child("terminationMessagePath"), tm, "must be an absolute path"))
	}
	return errs
}

// stopSignals are the signal names the API server accepts.
var stopSignals = []v1.Signal{
	v1.SIGABRT, v1.SIGALRM, v1.SIGBUS, v1.SIGCHLD, v1.SIGCLD, v1.SIGCONT, v1.SIGFPE, v1.SIGHUP, v1.SIGILL,
	v1.SIGINT, v1.SIGIO, v1.SIGIOT, v1.SIGKILL, v1.SIGPIPE, v1.SIGPOLL, v1.SIGPROF, v1.SIGPWR, v1.SIGQUIT,
	v1.SIGSEGV, v1.SIGSTKFLT, v1.SIGSTOP, v1.SIGSYS, v1.SIGTERM, v1.SIGTRAP, v1.SIGTSTP, v1.SIGTTIN,
	v1.SIGTTOU, v1.SIGURG, v1.SIGUSR1, v1.SIGUSR2, v1.SIGVTALRM, v1.SIGWINCH, v1.SIGXCPU, v1.SIGXFSZ,
	v1.SIGRTMIN, v1.SIGRTMINPLUS1, v1.SIGRTMINPLUS2, v1.SIGRTMINPLUS3, v1.SIGRTMINPLUS4, v1.SIGRTMINPLUS5,
	v1.SIGRTMINPLUS6, v1.SIGRTMINPLUS7, v1.SIGRTMINPLUS8, v1.SIGRTMINPLUS9, v1.SIGRTMINPLUS10,
	v1.SIGRTMINPLUS11, v1.SIGRTMINPLUS12, v1.SIGRTMINPLUS13, v1.SIGRTMINPLUS14, v1.SIGRTMINPLUS15,
	v1.SIGRTMAXMINUS14, v1.SIGRTMAXMINUS13, v1.SIGRTMAXMINUS12, v1.SIGRTMAXMINUS11, v1.SIGRTMAXMINUS10,
	v1.SIGRTMAXMINUS9, v1.SIGRTMAXMINUS8, v1.SIGRTMAXMINUS7, v1.SIGRTMAXMINUS6, v1.SIGRTMAXMINUS5,
	v1.SIGRTMAXMINUS4, v1.SIGRTMAXMINUS3, v1.SIGRTMAXMINUS2, v1.SIGRTMAXMINUS1, v1.SIGRTMAX,
}
