package validation

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// safeSysctls is the kubelet's safe set (pkg/kubelet/sysctl, v1.37), the
// same list Pod Security baseline allows: namespaced, and unable to affect
// other pods or the host.
var safeSysctls = []string{
	"kernel.shm_rmid_forced",
	"net.ipv4.ip_local_port_range",
	"net.ipv4.tcp_syncookies",
	"net.ipv4.ping_group_range",
	"net.ipv4.ip_unprivileged_port_start",
	"net.ipv4.ip_local_reserved_ports",
	"net.ipv4.tcp_keepalive_time",
	"net.ipv4.tcp_fin_timeout",
	"net.ipv4.tcp_keepalive_intvl",
	"net.ipv4.tcp_keepalive_probes",
	"net.ipv4.tcp_rmem",
	"net.ipv4.tcp_wmem",
	"net.ipv4.tcp_slow_start_after_idle",
	"net.ipv4.tcp_notsent_lowat",
}

// ipcSysctls are the IPC namespace's sysctls besides the fs.mqueue. tree.
var ipcSysctls = []string{
	"kernel.sem", "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced",
	"kernel.msgmax", "kernel.msgmnb", "kernel.msgmni",
}

// sysctlNamespace is "net", "ipc" or "" for a sysctl no container namespace
// holds (it would change the host), as the kubelet's NamespacedBy.
func sysctlNamespace(name string) string {
	switch {
	case strings.HasPrefix(name, "net."):
		return "net"
	case strings.HasPrefix(name, "fs.mqueue.") || slices.Contains(ipcSysctls, name):
		return "ipc"
	}
	return ""
}

// normalizeSysctl turns the slash form (net/ipv4/ip_forward) into dots.
func normalizeSysctl(name string) string {
	if i := strings.IndexAny(name, "./"); i >= 0 && name[i] == '/' {
		return strings.ReplaceAll(name, "/", ".")
	}
	return name
}

// unsafeAllowed reports whether name matches allowed_unsafe_sysctls: a full
// name, or a prefix ending in "*" as the kubelet's --allowed-unsafe-sysctls.
func unsafeAllowed(name string, allowed []string) bool {
	for _, a := range allowed {
		if prefix, glob := strings.CutSuffix(a, "*"); glob && strings.HasPrefix(name, prefix) || a == name {
			return true
		}
	}
	return false
}

// validateSysctls holds every source to the kubelet's sysctl rules: a sysctl
// outside the safe set needs allowed_unsafe_sysctls (where the kubelet would
// fail the pod with SysctlForbidden, berth refuses it at load); at baseline
// and restricted only the safe set is allowed; and no pod may set a
// sysctl of a namespace it shares with the host.
func validateSysctls(spec *v1.PodSpec, opts Options) field.ErrorList {
	sc := spec.SecurityContext
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	for i, s := range sc.Sysctls {
		p := field.NewPath("spec", "securityContext", "sysctls").Index(i).Child("name")
		name := normalizeSysctl(s.Name)
		ns := sysctlNamespace(name)
		safe := slices.Contains(safeSysctls, name)
		switch {
		case s.Name == "":
			// Required: reported by validatePodSecurity.
		case !safe && !opts.privileged():
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("violates PodSecurity %q: forbidden sysctls (%s is not in the safe set)", opts.level(), s.Name)))
		case !safe && !unsafeAllowed(name, opts.AllowedUnsafeSysctls):
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("SysctlForbidden: %s is not in the kubelet's safe set nor in allowed_unsafe_sysctls", s.Name)))
		case ns == "":
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("SysctlForbidden: %s is not namespaced; it would change the host", s.Name)))
		case ns == "net" && spec.HostNetwork:
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("SysctlForbidden: %s is not allowed with hostNetwork", s.Name)))
		case ns == "ipc" && spec.HostIPC:
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("SysctlForbidden: %s is not allowed with hostIPC", s.Name)))
		}
	}
	return errs
}
