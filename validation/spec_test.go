package validation_test

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/validation"
)

func env(p *v1.Pod, vf *v1.EnvVarSource) {
	p.Spec.Containers[1].Env = []v1.EnvVar{{Name: "X", ValueFrom: vf}}
}

func mount(p *v1.Pod, f func(m *v1.VolumeMount)) { f(&p.Spec.Containers[0].VolumeMounts[0]) }

func TestIssue12Accepted(t *testing.T) {
	cases := map[string]func(p *v1.Pod){
		"fieldRef name": func(p *v1.Pod) {
			env(p, &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}})
		},
		"fieldRef label": func(p *v1.Pod) {
			env(p, &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels['app.io/x']"}})
		},
		"fieldRef annotation": func(p *v1.Pod) {
			env(p, &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.annotations['a']"}})
		},
		"fieldRef hostIPs": func(p *v1.Pod) {
			env(p, &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.hostIPs"}})
		},
		"resourceFieldRef": func(p *v1.Pod) {
			env(p, &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "web", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}})
		},
		"resourceFieldRef own": func(p *v1.Pod) {
			env(p, &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "requests.cpu"}})
		},
		"subPathExpr": func(p *v1.Pod) { mount(p, func(m *v1.VolumeMount) { m.SubPathExpr = "$(POD)/x" }) },
		"propagation None": func(p *v1.Pod) {
			mount(p, func(m *v1.VolumeMount) { m.MountPropagation = ptr.To(v1.MountPropagationHostToContainer) })
		},
		"bidirectional privileged": func(p *v1.Pod) {
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{Privileged: ptr.To(true)}
			mount(p, func(m *v1.VolumeMount) { m.MountPropagation = ptr.To(v1.MountPropagationBidirectional) })
		},
		"recursiveReadOnly": func(p *v1.Pod) {
			mount(p, func(m *v1.VolumeMount) { m.ReadOnly, m.RecursiveReadOnly = true, ptr.To(v1.RecursiveReadOnlyEnabled) })
		},
		"recursiveReadOnly Disabled": func(p *v1.Pod) {
			mount(p, func(m *v1.VolumeMount) { m.RecursiveReadOnly = ptr.To(v1.RecursiveReadOnlyDisabled) })
		},
		"dnsPolicy None": func(p *v1.Pod) {
			p.Spec.DNSPolicy = v1.DNSNone
			p.Spec.DNSConfig = &v1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"a.example."},
				Options: []v1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}}}
		},
		"dnsPolicy ClusterFirstWithHostNet": func(p *v1.Pod) { p.Spec.DNSPolicy = v1.DNSClusterFirstWithHostNet },
		"hostAliases": func(p *v1.Pod) {
			p.Spec.HostAliases = []v1.HostAlias{{IP: "10.0.0.1", Hostnames: []string{"db", "db.local"}}, {IP: "::1", Hostnames: []string{"v6"}}}
		},
		"sysctls": func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{{Name: "net.ipv4.ip_local_port_range", Value: "1 2"}, {Name: "kernel/shm_rmid_forced", Value: "1"}}}
		},
		"supplementalGroupsPolicy Merge": func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{SupplementalGroupsPolicy: ptr.To(v1.SupplementalGroupsPolicyMerge), FSGroup: ptr.To[int64](2000)}
		},
		"hostUsers true": func(p *v1.Pod) { p.Spec.HostUsers = ptr.To(true) },
		"os linux":       func(p *v1.Pod) { p.Spec.OS = &v1.PodOS{Name: v1.Linux} },
		"resources": func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Limits = v1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("1Gi"), "ephemeral-storage": resource.MustParse("1Gi")}
		},
		"profiles": func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("p.json")}}
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeUnconfined},
				ProcMount: ptr.To(v1.DefaultProcMount)}
		},
		"stopSignal": func(p *v1.Pod) { p.Spec.Containers[0].Lifecycle = &v1.Lifecycle{StopSignal: ptr.To(v1.SIGRTMINPLUS3)} },
		"termination": func(p *v1.Pod) {
			p.Spec.Containers[0].TerminationMessagePath = "/tmp/msg"
			p.Spec.Containers[0].TerminationMessagePolicy = v1.TerminationMessageFallbackToLogsOnError
		},
		"activeDeadlineSeconds": func(p *v1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](60) },
		"stdin tty":             func(p *v1.Pod) { p.Spec.Containers[0].Stdin, p.Spec.Containers[0].TTY = true, true },
		"HTTP1 probe": func(p *v1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromInt32(8080), Protocol: ptr.To(v1.HTTPProtocolHTTP1)}}}
		},
		"not applicable": func(p *v1.Pod) {
			p.Spec.Tolerations = []v1.Toleration{{Key: "k"}}
			p.Spec.ServiceAccountName = "sa"
			p.Spec.NodeName = "elsewhere"
		},
		"procMount Unmasked with host access": func(p *v1.Pod) {
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{ProcMount: ptr.To(v1.UnmaskedProcMount)}
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			if errs := specErrs(t, mutate, validation.Options{Level: model.LevelPrivileged}); len(errs) > 0 {
				t.Errorf("refused: %q", errs)
			}
		})
	}
}

func TestIssue12Refused(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(p *v1.Pod)
		want   string // "field: message prefix" of one error
	}{
		{"fieldRef path", func(p *v1.Pod) {
			env(p, &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.hostname"}})
		},
			"spec.containers[1].env[0].valueFrom.fieldRef.fieldPath: Forbidden: not supported by berth (berth resolves metadata.name"},
		{"fieldRef apiVersion", func(p *v1.Pod) {
			env(p, &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{APIVersion: "v2", FieldPath: "metadata.name"}})
		}, "spec.containers[1].env[0].valueFrom.fieldRef.apiVersion: Unsupported value"},
		{"fieldRef bad label", func(p *v1.Pod) {
			env(p, &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels['a b']"}})
		},
			"spec.containers[1].env[0].valueFrom.fieldRef.fieldPath: Invalid value"},
		{"resource name", func(p *v1.Pod) {
			env(p, &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.nvidia.com/gpu"}})
		},
			"spec.containers[1].env[0].valueFrom.resourceFieldRef.resource: Unsupported value"},
		{"resource container", func(p *v1.Pod) {
			env(p, &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "nope", Resource: "limits.cpu"}})
		}, `spec.containers[1].env[0].valueFrom.resourceFieldRef.containerName: Not found: "nope"`},
		{"resource divisor", func(p *v1.Pod) {
			env(p, &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.cpu", Divisor: resource.MustParse("-1")}})
		}, "spec.containers[1].env[0].valueFrom.resourceFieldRef.divisor: Invalid value"},
		{"configMapKeyRef name", func(p *v1.Pod) { env(p, &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{Key: "k"}}) },
			"spec.containers[1].env[0].valueFrom.configMapKeyRef.name: Required value"},
		{"secretKeyRef key", func(p *v1.Pod) {
			env(p, &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "s"}, Key: "a/b"}})
		}, `spec.containers[1].env[0].valueFrom.secretKeyRef.key: Invalid value: "a/b"`},
		{"empty valueFrom", func(p *v1.Pod) { env(p, &v1.EnvVarSource{}) }, "spec.containers[1].env[0].valueFrom: Invalid value"},
		{"envFrom", func(p *v1.Pod) {
			p.Spec.Containers[0].EnvFrom = []v1.EnvFromSource{{Prefix: "A"}}
		}, "spec.containers[0].envFrom[0]: Invalid value: \"\": must specify exactly one of: `configMapRef` or `secretRef`"},
		{"configMap item path", func(p *v1.Pod) {
			p.Spec.Volumes[0].VolumeSource = v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "c"},
				Items: []v1.KeyToPath{{Key: "k", Path: "a/../../etc"}}}}
		}, `spec.volumes[0].configMap.items[0].path: Invalid value: "a/../../etc": must not contain '..'`},
		{"secret mode", func(p *v1.Pod) {
			p.Spec.Volumes[0].VolumeSource = v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s", DefaultMode: ptr.To[int32](0o1777)}}
		}, "spec.volumes[0].secret.defaultMode: Invalid value: 1023: must be a number between 0 and 0777"},
		{"projected token", func(p *v1.Pod) {
			p.Spec.Volumes[0].VolumeSource = v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
				{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}}}}}
		}, "spec.volumes[0].projected.sources[0].serviceAccountToken: Forbidden: not supported by berth (service account tokens are issued by an API server)"},
		{"subPath and subPathExpr", func(p *v1.Pod) { mount(p, func(m *v1.VolumeMount) { m.SubPath, m.SubPathExpr = "a", "b" }) },
			"spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: \"b\": subPathExpr and subPath are mutually exclusive"},
		{"subPathExpr dotdot", func(p *v1.Pod) { mount(p, func(m *v1.VolumeMount) { m.SubPathExpr = "../$(X)" }) },
			"spec.containers[0].volumeMounts[0].subPathExpr: Invalid value"},
		{"propagation value", func(p *v1.Pod) {
			mount(p, func(m *v1.VolumeMount) { m.MountPropagation = ptr.To(v1.MountPropagationMode("Shared")) })
		},
			"spec.containers[0].volumeMounts[0].mountPropagation: Unsupported value"},
		{"bidirectional unprivileged", func(p *v1.Pod) {
			mount(p, func(m *v1.VolumeMount) { m.MountPropagation = ptr.To(v1.MountPropagationBidirectional) })
		}, "spec.containers[0].volumeMounts[0].mountPropagation: Forbidden: Bidirectional"},
		{"recursiveReadOnly needs readOnly", func(p *v1.Pod) {
			mount(p, func(m *v1.VolumeMount) { m.RecursiveReadOnly = ptr.To(v1.RecursiveReadOnlyIfPossible) })
		}, "spec.containers[0].volumeMounts[0].recursiveReadOnly: Forbidden: may only be specified when readOnly is true"},
		{"recursiveReadOnly propagation", func(p *v1.Pod) {
			mount(p, func(m *v1.VolumeMount) {
				m.ReadOnly, m.RecursiveReadOnly, m.MountPropagation = true, ptr.To(v1.RecursiveReadOnlyEnabled), ptr.To(v1.MountPropagationHostToContainer)
			})
		}, "spec.containers[0].volumeMounts[0].recursiveReadOnly: Forbidden: may only be specified when mountPropagation is None"},
		{"recursiveReadOnly value", func(p *v1.Pod) {
			mount(p, func(m *v1.VolumeMount) { m.RecursiveReadOnly = ptr.To(v1.RecursiveReadOnlyMode("x")) })
		},
			"spec.containers[0].volumeMounts[0].recursiveReadOnly: Unsupported value"},
		{"bindMountOptions", func(p *v1.Pod) { mount(p, func(m *v1.VolumeMount) { m.BindMountOptions = []string{"noexec"} }) },
			"spec.containers[0].volumeMounts[0].bindMountOptions: Forbidden: not supported by berth"},
		{"dnsPolicy value", func(p *v1.Pod) { p.Spec.DNSPolicy = "Cluster" }, `spec.dnsPolicy: Unsupported value: "Cluster"`},
		{"dnsPolicy None without nameserver", func(p *v1.Pod) { p.Spec.DNSPolicy = v1.DNSNone }, "spec.dnsConfig.nameservers: Required value"},
		{"too many nameservers", func(p *v1.Pod) {
			p.Spec.DNSConfig = &v1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "1.1.1.2", "1.1.1.3", "1.1.1.4"}}
		}, "spec.dnsConfig.nameservers: Invalid value"},
		{"nameserver IP", func(p *v1.Pod) { p.Spec.DNSConfig = &v1.PodDNSConfig{Nameservers: []string{"dns"}} },
			`spec.dnsConfig.nameservers[0]: Invalid value: "dns"`},
		{"too many searches", func(p *v1.Pod) {
			p.Spec.DNSConfig = &v1.PodDNSConfig{Searches: strings.Split(strings.Repeat("a,", 32)+"a", ",")}
		}, "spec.dnsConfig.searches: Invalid value"},
		{"search domain", func(p *v1.Pod) { p.Spec.DNSConfig = &v1.PodDNSConfig{Searches: []string{"A_B"}} },
			"spec.dnsConfig.searches[0]: Invalid value"},
		{"dns option name", func(p *v1.Pod) { p.Spec.DNSConfig = &v1.PodDNSConfig{Options: []v1.PodDNSConfigOption{{}}} },
			"spec.dnsConfig.options[0].name: Required value"},
		{"hostAlias IP", func(p *v1.Pod) { p.Spec.HostAliases = []v1.HostAlias{{IP: "db", Hostnames: []string{"db"}}} },
			`spec.hostAliases[0].ip: Invalid value: "db"`},
		{"hostAlias hostnames", func(p *v1.Pod) { p.Spec.HostAliases = []v1.HostAlias{{IP: "10.0.0.1"}} },
			"spec.hostAliases[0].hostnames: Required value"},
		{"hostAlias hostname", func(p *v1.Pod) {
			p.Spec.HostAliases = []v1.HostAlias{{IP: "10.0.0.1", Hostnames: []string{"Bad_Name"}}}
		},
			"spec.hostAliases[0].hostnames[0]: Invalid value"},
		{"sysctl name", func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{{Name: "Net.IPv4", Value: "1"}}}
		}, `spec.securityContext.sysctls[0].name: Invalid value: "Net.IPv4"`},
		{"sysctl duplicate", func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{{Name: "kernel.msgmax", Value: "1"}, {Name: "kernel.msgmax", Value: "2"}}}
		}, "spec.securityContext.sysctls[1].name: Duplicate value"},
		{"supplementalGroupsPolicy Strict", func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{SupplementalGroupsPolicy: ptr.To(v1.SupplementalGroupsPolicyStrict)}
		}, "spec.securityContext.supplementalGroupsPolicy: Forbidden: not supported by berth"},
		{"hostUsers false", func(p *v1.Pod) { p.Spec.HostUsers = ptr.To(false) }, "spec.hostUsers: Forbidden: not supported by berth"},
		{"hugepages", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Limits = v1.ResourceList{"hugepages-2Mi": resource.MustParse("2Mi")}
		}, "spec.containers[0].resources.limits[hugepages-2Mi]: Forbidden: not supported by berth (hugepages"},
		{"extended resource", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests = v1.ResourceList{"example.com/gpu": resource.MustParse("1")}
		}, "spec.containers[0].resources.requests[example.com/gpu]: Forbidden: not supported by berth (extended resources"},
		{"resource claims", func(p *v1.Pod) { p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "c"}} },
			"spec.containers[0].resources.claims: Forbidden: not supported by berth"},
		{"procMount Unmasked", func(p *v1.Pod) {
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{ProcMount: ptr.To(v1.UnmaskedProcMount)}
		}, `spec.containers[0].securityContext.procMount: Forbidden: violates PodSecurity "baseline": procMount`},
		{"seccomp Localhost without profile", func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost}}
		}, "spec.securityContext.seccompProfile.localhostProfile: Required value"},
		{"appArmor profile without Localhost", func(p *v1.Pod) {
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault, LocalhostProfile: ptr.To("x")}}
		}, "spec.containers[0].securityContext.appArmorProfile.localhostProfile: Invalid value"},
		{"seccomp type", func(p *v1.Pod) {
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{SeccompProfile: &v1.SeccompProfile{Type: "Custom"}}
		}, "spec.containers[0].securityContext.seccompProfile.type: Unsupported value"},
		{"stopSignal", func(p *v1.Pod) { p.Spec.Containers[0].Lifecycle = &v1.Lifecycle{StopSignal: ptr.To(v1.Signal("TERM"))} },
			`spec.containers[0].lifecycle.stopSignal: Unsupported value: "TERM"`},
		{"terminationMessagePolicy", func(p *v1.Pod) { p.Spec.Containers[0].TerminationMessagePolicy = "Logs" },
			"spec.containers[0].terminationMessagePolicy: Unsupported value"},
		{"terminationMessagePath", func(p *v1.Pod) { p.Spec.Containers[0].TerminationMessagePath = "msg" },
			`spec.containers[0].terminationMessagePath: Invalid value: "msg": must be an absolute path`},
		{"activeDeadlineSeconds", func(p *v1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](0) },
			"spec.activeDeadlineSeconds: Invalid value: 0: must be greater than 0"},
		{"HTTP2 probe", func(p *v1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromInt32(8080), Protocol: ptr.To(v1.HTTPProtocolHTTP2)}}}
		}, "spec.containers[0].livenessProbe.httpGet.protocol: Forbidden: not supported by berth"},
		{"probe grace period", func(p *v1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}, TerminationGracePeriodSeconds: ptr.To[int64](5)}
		}, "spec.containers[0].livenessProbe.terminationGracePeriodSeconds: Forbidden: not supported by berth"},
		{"restartPolicyRules", func(p *v1.Pod) {
			p.Spec.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{{Action: "Restart"}}
		}, "spec.containers[0].restartPolicyRules: Forbidden: not supported by berth"},
		{"volumeDevices", func(p *v1.Pod) {
			p.Spec.Containers[0].VolumeDevices = []v1.VolumeDevice{{Name: "d", DevicePath: "/dev/x"}}
		},
			"spec.containers[0].volumeDevices: Forbidden: not supported by berth"},
		{"runtimeClassName", func(p *v1.Pod) { p.Spec.RuntimeClassName = ptr.To("gvisor") }, "spec.runtimeClassName: Forbidden: not supported by berth"},
		{"readinessGates", func(p *v1.Pod) { p.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "x"}} }, "spec.readinessGates: Forbidden"},
		{"schedulingGates", func(p *v1.Pod) { p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "x"}} }, "spec.schedulingGates: Forbidden"},
		{"resourceClaims", func(p *v1.Pod) { p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "x"}} }, "spec.resourceClaims: Forbidden"},
		{"hostnameOverride", func(p *v1.Pod) { p.Spec.HostnameOverride = ptr.To("h") }, "spec.hostnameOverride: Forbidden"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := specErrs(t, tc.mutate, validation.Options{})
			for _, e := range errs {
				if strings.HasPrefix(e, tc.want) {
					return
				}
			}
			t.Errorf("got %q\nwant %q", errs, tc.want)
		})
	}
}
