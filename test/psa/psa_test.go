// Package psa checks berth's Pod Security levels against the reference
// evaluator of Kubernetes Pod Security Admission. It is its own module so
// that the evaluator's dependencies (k8s.io/apiserver's etcd) never reach
// berth's go.mod; scripts/test.sh runs it.
package psa

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/validation"
)

// pick returns one of vs, or the zero value (unset) half the time.
func pick[T any](r *rand.Rand, vs ...T) T {
	var zero T
	if r.IntN(2) == 0 {
		return zero
	}
	return vs[r.IntN(len(vs))]
}

func boolPtr(r *rand.Rand) *bool { return pick(r, ptr.To(true), ptr.To(false)) }

func seccomp(r *rand.Rand) *v1.SeccompProfile {
	return pick(r, &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault},
		&v1.SeccompProfile{Type: v1.SeccompProfileTypeUnconfined},
		&v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("p.json")})
}

func appArmor(r *rand.Rand) *v1.AppArmorProfile {
	return pick(r, &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault},
		&v1.AppArmorProfile{Type: v1.AppArmorProfileTypeUnconfined},
		&v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("berth-test")})
}

func seLinux(r *rand.Rand) *v1.SELinuxOptions {
	return pick(r, &v1.SELinuxOptions{Type: "container_t"}, &v1.SELinuxOptions{Type: "spc_t"},
		&v1.SELinuxOptions{User: "system_u"}, &v1.SELinuxOptions{Role: "object_r"}, &v1.SELinuxOptions{Level: "s0:c1,c2"})
}

func user(r *rand.Rand) *int64 { return pick(r, ptr.To(int64(0)), ptr.To(int64(1000))) }

func container(r *rand.Rand, name string) v1.Container {
	c := v1.Container{Name: name, Image: "berth/testapp:1"}
	if r.IntN(3) == 0 {
		return c
	}
	sc := &v1.SecurityContext{
		Privileged:               boolPtr(r),
		AllowPrivilegeEscalation: boolPtr(r),
		RunAsNonRoot:             boolPtr(r),
		RunAsUser:                user(r),
		SeccompProfile:           seccomp(r),
		AppArmorProfile:          appArmor(r),
		SELinuxOptions:           seLinux(r),
		ProcMount:                pick(r, ptr.To(v1.DefaultProcMount), ptr.To(v1.UnmaskedProcMount)),
	}
	if sc.Privileged != nil && *sc.Privileged && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		sc.AllowPrivilegeEscalation = nil // the API server refuses the pair
	}
	if r.IntN(2) == 0 {
		caps := &v1.Capabilities{}
		caps.Drop = pick(r, []v1.Capability{"ALL"}, []v1.Capability{"NET_RAW"})
		caps.Add = pick(r, []v1.Capability{"NET_BIND_SERVICE"}, []v1.Capability{"CHOWN"}, []v1.Capability{"SYS_ADMIN"}, []v1.Capability{"NET_RAW"})
		sc.Capabilities = caps
	}
	if r.IntN(6) == 0 {
		sc.WindowsOptions = &v1.WindowsSecurityContextOptions{HostProcess: ptr.To(r.IntN(2) == 0)}
	}
	c.SecurityContext = sc
	if r.IntN(4) == 0 {
		c.LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Port: intstrFrom(80), Host: pick(r, "10.0.0.1", "127.0.0.1")}}}
	}
	if r.IntN(4) == 0 {
		c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{TCPSocket: &v1.TCPSocketAction{Port: intstrFrom(80), Host: pick(r, "169.254.169.254")}}}
	}
	if r.IntN(4) == 0 {
		c.Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: pick(r, int32(8080), int32(80))}}
	}
	return c
}

func randomPod(r *rand.Rand) *v1.Pod {
	pod := &v1.Pod{}
	pod.Name, pod.Namespace = "p", "default"
	spec := &pod.Spec
	spec.HostNetwork = r.IntN(8) == 0
	spec.HostPID = r.IntN(8) == 0
	spec.HostIPC = r.IntN(8) == 0
	if r.IntN(2) == 0 {
		spec.SecurityContext = &v1.PodSecurityContext{
			RunAsNonRoot:    boolPtr(r),
			RunAsUser:       user(r),
			SeccompProfile:  seccomp(r),
			AppArmorProfile: appArmor(r),
			SELinuxOptions:  seLinux(r),
		}
		if r.IntN(3) == 0 {
			spec.SecurityContext.Sysctls = []v1.Sysctl{{Name: pick(r, "net.ipv4.tcp_syncookies", "kernel.shm_rmid_forced", "net.core.somaxconn", "kernel.msgmax", "net.ipv4.tcp_notsent_lowat"), Value: "1"}}
			if spec.SecurityContext.Sysctls[0].Name == "" {
				spec.SecurityContext.Sysctls = nil
			}
		}
		if r.IntN(6) == 0 {
			spec.SecurityContext.WindowsOptions = &v1.WindowsSecurityContextOptions{HostProcess: ptr.To(r.IntN(2) == 0)}
		}
	}
	if r.IntN(4) == 0 {
		pod.Annotations = map[string]string{pick(r, "container.apparmor.security.beta.kubernetes.io/c0", "seccomp.security.alpha.kubernetes.io/pod", "container.seccomp.security.alpha.kubernetes.io/c0") + "x": ""}
		for k := range pod.Annotations {
			delete(pod.Annotations, k)
			k = strings.TrimSuffix(k, "x")
			if k != "" {
				pod.Annotations[k] = pick(r, "runtime/default", "unconfined", "localhost/p")
			}
		}
	}
	spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	if r.IntN(6) == 0 {
		spec.Volumes = append(spec.Volumes, v1.Volume{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp"}}})
	}
	if r.IntN(3) == 0 {
		spec.InitContainers = []v1.Container{container(r, "init")}
	}
	spec.Containers = []v1.Container{container(r, "c0")}
	if r.IntN(2) == 0 {
		spec.Containers = append(spec.Containers, container(r, "c1"))
	}
	if spec.HostNetwork {
		for i := range spec.Containers {
			for j := range spec.Containers[i].Ports {
				spec.Containers[i].Ports[j].HostPort = spec.Containers[i].Ports[j].ContainerPort
			}
		}
	}
	return pod
}

// harden makes pod meet restricted, then maybe undoes one part of it, so
// that pods near the restricted boundary are generated too.
func harden(r *rand.Rand, pod *v1.Pod) {
	pod.Annotations = nil
	spec := &pod.Spec
	spec.HostNetwork, spec.HostPID, spec.HostIPC = false, false, false
	spec.Volumes = spec.Volumes[:1]
	spec.SecurityContext = &v1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault}}
	for _, list := range [][]v1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			c := &list[i]
			c.Ports, c.LivenessProbe, c.Lifecycle = nil, nil, nil
			c.SecurityContext = &v1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &v1.Capabilities{Drop: []v1.Capability{"ALL"}}}
		}
	}
	switch r.IntN(8) {
	case 0:
		spec.SecurityContext.RunAsNonRoot = nil
	case 1:
		spec.SecurityContext.SeccompProfile = nil
	case 2:
		spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil
	case 3:
		spec.Containers[0].SecurityContext.Capabilities.Add = []v1.Capability{pick[v1.Capability](r, "NET_BIND_SERVICE", "CHOWN")}
	case 4:
		spec.Containers[0].SecurityContext.RunAsUser = user(r)
	case 5:
		spec.Containers[0].SecurityContext.SeccompProfile = seccomp(r)
		spec.Containers[0].SecurityContext.RunAsNonRoot = boolPtr(r)
	}
}

// berthRefusals are the Pod Security refusals berth's validation gives;
// allPorts permits every host port, which PSA's baseline forbids (berth's
// one documented change: the source's host_ports instead).
func berthRefusals(pod *v1.Pod, level model.PodSecurityLevel, allPorts bool) []string {
	opts := validation.Options{Level: level, AllowedUnsafeSysctls: []string{"net.core.*", "kernel.msg*"}}
	if allPorts {
		opts.HostPorts = model.PortRanges{{Min: 1, Max: 65535}}
	}
	var out []string
	for _, e := range validation.Pod(pod, opts) {
		if strings.Contains(e.Detail, "violates PodSecurity") {
			out = append(out, e.Error())
		}
	}
	return out
}

func psaRefusals(ev policy.Evaluator, pod *v1.Pod, level api.Level, skipHostPorts bool) []string {
	var out []string
	for _, res := range ev.EvaluatePod(api.LevelVersion{Level: level, Version: api.LatestVersion()}, &pod.ObjectMeta, &pod.Spec) {
		if !res.Allowed && !(skipHostPorts && res.ForbiddenReason == "hostPort") {
			out = append(out, res.ForbiddenReason+": "+res.ForbiddenDetail)
		}
	}
	return out
}

// TestLevelsMatchPodSecurityAdmission generates pods over every control's
// fields and requires berth to refuse exactly the pods PSA v1.37 refuses,
// at baseline and restricted, host ports aside.
func TestLevelsMatchPodSecurityAdmission(t *testing.T) {
	ev, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	counts := map[string]int{}
	for i := range 20000 {
		pod := randomPod(r)
		if i%2 == 0 {
			harden(r, pod)
		}
		for _, lv := range []struct {
			berth model.PodSecurityLevel
			psa   api.Level
		}{{model.LevelBaseline, api.LevelBaseline}, {model.LevelRestricted, api.LevelRestricted}} {
			b := berthRefusals(pod, lv.berth, true)
			p := psaRefusals(ev, pod, lv.psa, true)
			if (len(b) == 0) != (len(p) == 0) {
				t.Fatalf("pod %d at %s: berth refuses %q, PSA refuses %q\npod: %s", i, lv.berth, b, p, describe(pod))
			}
			counts[fmt.Sprintf("%s refused=%v", lv.berth, len(b) > 0)]++
		}
	}
	// Both outcomes occur at both levels, so the comparison tells something.
	for _, k := range []string{"baseline refused=true", "baseline refused=false", "restricted refused=true", "restricted refused=false"} {
		if counts[k] < 100 {
			t.Errorf("only %d pods with %s: %v", counts[k], k, counts)
		}
	}
	t.Logf("outcomes: %v", counts)
}

// TestHostPortsAreTheOneChange: with host_ports empty, berth's baseline
// refuses every host port, as PSA's does.
func TestHostPortsAreTheOneChange(t *testing.T) {
	ev, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		pod := randomPod(r)
		opts := validation.Options{Level: model.LevelBaseline, HostPorts: model.PortRanges{}, AllowedUnsafeSysctls: []string{"net.core.*", "kernel.msg*"}}
		var b []string
		for _, e := range validation.Pod(pod, opts) {
			if strings.Contains(e.Detail, "violates PodSecurity") {
				b = append(b, e.Error())
			}
		}
		p := psaRefusals(ev, pod, api.LevelBaseline, false)
		if (len(b) == 0) != (len(p) == 0) {
			t.Fatalf("pod %d: berth refuses %q, PSA refuses %q\npod: %s", i, b, p, describe(pod))
		}
	}
}

func describe(pod *v1.Pod) string {
	b, _ := json.Marshal(pod)
	return string(b)
}

func intstrFrom(port int) intstr.IntOrString { return intstr.FromInt(port) }
