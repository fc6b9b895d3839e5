package podconfig

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/berth-dev/berth/runtime/fake"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podfs"
	"github.com/berth-dev/berth/runtime"
)

const gi = int64(1) << 30

func mapper(t *testing.T) *Builder {
	t.Helper()
	root := t.TempDir()
	return New(Config{Node: "node-a", RootDir: root,
		NodeInfo: NodeInfo{IP: "10.0.0.5", CPUMilli: 4000, Memory: 8 * gi}}, podfs.New(root), podfs.Host{})
}

func specPod(mutate func(*v1.Pod)) *model.Pod {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod", UID: "0123abcd-0000-0000-0000-000000000000",
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"team": "infra"}},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{{Name: "app", Image: "app:1"}}},
	}
	if mutate != nil {
		mutate(pod)
	}
	return &model.Pod{Key: "prod/web", Source: "file", Spec: pod}
}

func build(t *testing.T, c *Builder, p *model.Pod, image runtime.ImageInfo) *runtime.ContainerConfig {
	t.Helper()
	cfg, _, err := c.ContainerConfig(p, &p.Spec.Spec.Containers[0], Sandbox{ID: "sb1", IPs: PodIPs{PodIP: "172.17.0.9", HostIP: "10.0.0.5"}}, 0, 0, image, nil)
	if err != nil {
		t.Fatalf("ContainerConfig: %v", err)
	}
	return cfg
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		m[k] = v
	}
	return m
}

func TestExpandAsTheKubelet(t *testing.T) {
	vars := mappingFor(map[string]string{"A": "a", "B": "b"})
	for in, want := range map[string]string{
		"$(A)-$(B)": "a-b", "$$(A)": "$(A)", "$$": "$", "$(C)": "$(C)", "$(A": "$(A", "x$": "x$",
		"$A": "$A", "$$$(A)": "$a", "plain": "plain", "$()": "$()",
	} {
		if got := expand(in, vars); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEnvAndArgsExpansion(t *testing.T) {
	c := mapper(t)
	p := specPod(func(p *v1.Pod) {
		ctr := &p.Spec.Containers[0]
		ctr.Env = []v1.EnvVar{
			{Name: "FWD", Value: "$(LATER)"}, {Name: "A", Value: "x"}, {Name: "B", Value: "$(A)y"},
			{Name: "C", Value: "$(B)z"}, {Name: "ESC", Value: "$$(A)"}, {Name: "LATER", Value: "l"},
			{Name: "A", Value: "override"},
		}
		ctr.Command = []string{"/bin/$(A)"}
		ctr.Args = []string{"--c=$(C)", "$(MISSING)", "$$(A)"}
	})
	cfg := build(t, c, p, runtime.ImageInfo{})
	env := envMap(cfg.Env)
	want := map[string]string{"FWD": "$(LATER)", "A": "override", "B": "xy", "C": "xyz", "ESC": "$(A)", "LATER": "l"}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("env %s = %q, want %q (env %v)", k, env[k], v, cfg.Env)
		}
	}
	if len(cfg.Env) != len(want) || !strings.HasPrefix(cfg.Env[1], "A=") {
		t.Errorf("env = %v: want one A, in its first position", cfg.Env)
	}
	if !slices.Equal(cfg.Entrypoint, []string{"/bin/override"}) || !slices.Equal(cfg.Cmd, []string{"--c=xyz", "$(MISSING)", "$(A)"}) {
		t.Errorf("command %v args %v", cfg.Entrypoint, cfg.Cmd)
	}
}

func TestDownwardAPI(t *testing.T) {
	c := mapper(t)
	field := func(name, path string) v1.EnvVar {
		return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: path}}}
	}
	res := func(name, ctr, r, div string) v1.EnvVar {
		sel := &v1.ResourceFieldSelector{ContainerName: ctr, Resource: r}
		if div != "" {
			sel.Divisor = resource.MustParse(div)
		}
		return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{ResourceFieldRef: sel}}
	}
	p := specPod(func(p *v1.Pod) {
		p.Spec.ServiceAccountName = "robot"
		ctr := &p.Spec.Containers[0]
		ctr.Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi"), v1.ResourceCPU: resource.MustParse("1500m")}
		ctr.Env = []v1.EnvVar{
			field("NAME", "metadata.name"), field("NS", "metadata.namespace"), field("UID", "metadata.uid"),
			field("APP", "metadata.labels['app']"), field("TEAM", "metadata.annotations['team']"), field("NONE", "metadata.labels['x']"),
			field("NODE", "spec.nodeName"), field("SA", "spec.serviceAccountName"), field("PODIP", "status.podIP"),
			field("PODIPS", "status.podIPs"), field("HOSTIP", "status.hostIP"),
			res("MEM", "", "limits.memory", "1Mi"), res("CPUREQ", "", "requests.cpu", "1m"), res("CPU", "", "limits.cpu", ""),
			res("SIDECPU", "side", "limits.cpu", ""), res("SIDEMEM", "side", "limits.memory", "1Gi"), res("SIDEREQ", "side", "requests.memory", ""),
			{Name: "REF", Value: "$(NAME).$(NS)"},
		}
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "side", Image: "app:1"})
	})
	env := envMap(build(t, c, p, runtime.ImageInfo{}).Env)
	want := map[string]string{
		"NAME": "web", "NS": "prod", "UID": "0123abcd-0000-0000-0000-000000000000", "APP": "web", "TEAM": "infra", "NONE": "",
		"NODE": "node-a", "SA": "robot", "PODIP": "172.17.0.9", "PODIPS": "172.17.0.9", "HOSTIP": "10.0.0.5",
		"MEM": "64", "CPUREQ": "1500", "CPU": "2", "SIDECPU": "4", "SIDEMEM": "8", "SIDEREQ": "0", "REF": "web.prod",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
}

func TestSecurityContextMerge(t *testing.T) {
	c := mapper(t)
	seccompDir := filepath.Join(c.cfg.RootDir, "seccomp")
	if err := os.MkdirAll(seccompDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(seccompDir, "audit.json"), []byte(`{"defaultAction":"SCMP_ACT_LOG"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		pod     *v1.PodSecurityContext
		ctr     *v1.SecurityContext
		image   string
		user    string
		groups  []string
		opts    []string
		unmask  bool
		wantErr string
	}{
		{name: "pod user and group inherited", pod: &v1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](3000)}, user: "1000:3000"},
		{name: "container wins", pod: &v1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](3000)},
			ctr: &v1.SecurityContext{RunAsUser: ptr.To[int64](2000)}, user: "2000:3000"},
		{name: "group alone keeps the image user", ctr: &v1.SecurityContext{RunAsGroup: ptr.To[int64](7)}, image: "1000:50", user: "1000:7"},
		{name: "group alone on a root image", ctr: &v1.SecurityContext{RunAsGroup: ptr.To[int64](7)}, user: "0:7"},
		{name: "fsGroup and supplementalGroups", pod: &v1.PodSecurityContext{FSGroup: ptr.To[int64](2000), SupplementalGroups: []int64{5, 6}}, groups: []string{"2000", "5", "6"}},
		{name: "non-root ok", pod: &v1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}, image: "65534"},
		{name: "non-root on a root image", pod: &v1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}, wantErr: "container has runAsNonRoot and image will run as root"},
		{name: "non-root with uid 0 image", ctr: &v1.SecurityContext{RunAsNonRoot: ptr.To(true)}, image: "0:0", wantErr: "image will run as root"},
		{name: "non-root named user", ctr: &v1.SecurityContext{RunAsNonRoot: ptr.To(true)}, image: "nobody", wantErr: "image has non-numeric user (nobody), cannot verify user is non-root"},
		{name: "non-root runAsUser 0", ctr: &v1.SecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](0)}, wantErr: "runAsUser breaks non-root policy"},
		{name: "non-root runAsUser wins over image", ctr: &v1.SecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](5)}, user: "5"},
		{name: "no privilege escalation", ctr: &v1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false)}, opts: []string{"no-new-privileges:true"}},
		{name: "seccomp unconfined from the pod", pod: &v1.PodSecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeUnconfined}}, opts: []string{"seccomp=unconfined"}},
		{name: "seccomp localhost", ctr: &v1.SecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("audit.json")}},
			opts: []string{`seccomp={"defaultAction":"SCMP_ACT_LOG"}`}},
		{name: "seccomp localhost missing", ctr: &v1.SecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("nope.json")}}, wantErr: "seccomp profile"},
		{name: "container seccomp wins", pod: &v1.PodSecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeUnconfined}},
			ctr: &v1.SecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault}}},
		{name: "apparmor", pod: &v1.PodSecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("berth-web")}}, opts: []string{"apparmor=berth-web"}},
		{name: "apparmor unconfined", ctr: &v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeUnconfined}}, opts: []string{"apparmor=unconfined"}},
		{name: "selinux", pod: &v1.PodSecurityContext{SELinuxOptions: &v1.SELinuxOptions{Type: "spc_t", Level: "s0:c1,c2"}}, opts: []string{"label=type:spc_t", "label=level:s0:c1,c2"}},
		{name: "unmasked proc", ctr: &v1.SecurityContext{ProcMount: ptr.To(v1.UnmaskedProcMount)}, unmask: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := specPod(func(p *v1.Pod) {
				p.Spec.SecurityContext = tc.pod
				p.Spec.Containers[0].SecurityContext = tc.ctr
			})
			cfg, _, err := c.ContainerConfig(p, &p.Spec.Spec.Containers[0], Sandbox{ID: "sb"}, 0, 0, runtime.ImageInfo{User: tc.image}, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.User != tc.user || !slices.Equal(cfg.GroupAdd, tc.groups) || !slices.Equal(cfg.SecurityOpt, tc.opts) || cfg.UnmaskProc != tc.unmask {
				t.Errorf("user %q groups %v opts %v unmask %v; want %q %v %v %v", cfg.User, cfg.GroupAdd, cfg.SecurityOpt, cfg.UnmaskProc, tc.user, tc.groups, tc.opts, tc.unmask)
			}
			if p.Spec.Spec.Containers[0].SecurityContext != tc.ctr {
				t.Error("the pod's container was modified")
			}
		})
	}
}

func TestContainerNamespacesAndProcess(t *testing.T) {
	c := mapper(t)
	p := specPod(func(p *v1.Pod) {
		p.Spec.ShareProcessNamespace = ptr.To(true)
		ctr := &p.Spec.Containers[0]
		ctr.Stdin, ctr.StdinOnce, ctr.TTY = true, true, true
		ctr.Lifecycle = &v1.Lifecycle{StopSignal: ptr.To(v1.SIGQUIT)}
	})
	cfg := build(t, c, p, runtime.ImageInfo{})
	if cfg.NetworkMode != "container:sb1" || cfg.IpcMode != "container:sb1" || cfg.PidMode != "container:sb1" {
		t.Errorf("net %q ipc %q pid %q, want the sandbox's", cfg.NetworkMode, cfg.IpcMode, cfg.PidMode)
	}
	if !cfg.OpenStdin || !cfg.StdinOnce || !cfg.Tty || cfg.StopSignal != "SIGQUIT" {
		t.Errorf("stdin %v once %v tty %v stop %q", cfg.OpenStdin, cfg.StdinOnce, cfg.Tty, cfg.StopSignal)
	}
	host := specPod(func(p *v1.Pod) { p.Spec.HostIPC, p.Spec.HostPID = true, true })
	cfg = build(t, c, host, runtime.ImageInfo{})
	if cfg.IpcMode != "host" || cfg.PidMode != "host" {
		t.Errorf("hostIPC/hostPID: ipc %q pid %q", cfg.IpcMode, cfg.PidMode)
	}
	if sb := c.SandboxConfig(host, 0, "sha256:pause"); sb.IpcMode != "host" || sb.PidMode != "host" {
		t.Errorf("sandbox ipc %q pid %q", sb.IpcMode, sb.PidMode)
	}
}

func TestResourcesAndOOMScores(t *testing.T) {
	c := mapper(t)
	q := resource.MustParse
	cases := []struct {
		name      string
		ctrs      []v1.ResourceRequirements
		priority  string
		shares    int64
		quota     int64
		memory    int64
		oom       int
		wantClass v1.PodQOSClass
	}{
		{name: "best effort", ctrs: []v1.ResourceRequirements{{}}, shares: 2, oom: 1000, wantClass: v1.PodQOSBestEffort},
		{name: "guaranteed", ctrs: []v1.ResourceRequirements{{Limits: v1.ResourceList{v1.ResourceCPU: q("500m"), v1.ResourceMemory: q("1Gi")}}},
			shares: 512, quota: 50000, memory: gi, oom: -997, wantClass: v1.PodQOSGuaranteed},
		{name: "burstable by memory request", ctrs: []v1.ResourceRequirements{{Requests: v1.ResourceList{v1.ResourceMemory: q("2Gi"), v1.ResourceCPU: q("1m")}}},
			shares: 2, oom: 750, wantClass: v1.PodQOSBurstable},
		{name: "burstable clamped low", ctrs: []v1.ResourceRequirements{{Requests: v1.ResourceList{v1.ResourceMemory: q("8Gi")}, Limits: v1.ResourceList{v1.ResourceMemory: q("9Gi")}}},
			shares: 2, memory: 9 * gi, oom: 3, wantClass: v1.PodQOSBurstable},
		{name: "burstable tiny request", ctrs: []v1.ResourceRequirements{{Requests: v1.ResourceList{v1.ResourceCPU: q("100m")}}},
			shares: 102, oom: 999, wantClass: v1.PodQOSBurstable},
		{name: "node critical", ctrs: []v1.ResourceRequirements{{}}, priority: "system-node-critical", shares: 2, oom: -997, wantClass: v1.PodQOSBestEffort},
		{name: "two containers, one unlimited", ctrs: []v1.ResourceRequirements{
			{Limits: v1.ResourceList{v1.ResourceCPU: q("1"), v1.ResourceMemory: q("1Gi")}}, {}},
			shares: 1024, quota: 100000, memory: gi, oom: 875, wantClass: v1.PodQOSBurstable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := specPod(func(p *v1.Pod) {
				p.Spec.PriorityClassName = tc.priority
				p.Spec.Containers = nil
				for i, r := range tc.ctrs {
					p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: string(rune('a' + i)), Image: "app:1", Resources: r})
				}
			})
			cfg := build(t, c, p, runtime.ImageInfo{})
			r := cfg.Resources
			if r.CPUShares != tc.shares || r.CPUQuota != tc.quota || r.Memory != tc.memory || r.MemorySwap != tc.memory {
				t.Errorf("resources %+v, want shares %d quota %d memory=swap %d", r, tc.shares, tc.quota, tc.memory)
			}
			if got := QOSClass(p.Spec); got != tc.wantClass {
				t.Errorf("qos %s, want %s", got, tc.wantClass)
			}
			if cfg.OomScoreAdj != tc.oom {
				t.Errorf("oom_score_adj %d, want %d", cfg.OomScoreAdj, tc.oom)
			}
		})
	}
	if sb := c.SandboxConfig(specPod(nil), 0, "sha256:pause"); sb.OomScoreAdj != -998 {
		t.Errorf("sandbox oom_score_adj %d, want -998", sb.OomScoreAdj)
	}
	c.cfg.NodeInfo.NoNegativeOOMScores = true
	if sb := c.SandboxConfig(specPod(nil), 0, "sha256:pause"); sb.OomScoreAdj != 0 {
		t.Errorf("sandbox oom_score_adj where the host refuses negative ones: %d, want 0", sb.OomScoreAdj)
	}
}

func TestSandboxNetworkFiles(t *testing.T) {
	c := mapper(t)
	p := specPod(func(p *v1.Pod) {
		p.Spec.Hostname = "db-0"
		p.Spec.Subdomain = "db"
		p.Spec.HostAliases = []v1.HostAlias{{IP: "192.0.2.7", Hostnames: []string{"a.test", "b.test"}}}
		p.Spec.DNSPolicy = v1.DNSNone
		p.Spec.DNSConfig = &v1.PodDNSConfig{Nameservers: []string{"192.0.2.53"}, Searches: []string{"svc.test"},
			Options: []v1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}, {Name: "edns0"}}}
		p.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{{Name: "net.ipv4.ping_group_range", Value: "0 1"}}}
	})
	sb := c.SandboxConfig(p, 0, "sha256:pause")
	if sb.Hostname != "db-0" || sb.Domainname != "db.prod.svc.cluster.local" {
		t.Errorf("hostname %q domain %q", sb.Hostname, sb.Domainname)
	}
	if !slices.Equal(sb.ExtraHosts, []string{"a.test:192.0.2.7", "b.test:192.0.2.7"}) {
		t.Errorf("extra hosts %v", sb.ExtraHosts)
	}
	if !slices.Equal(sb.DNS, []string{"192.0.2.53"}) || !slices.Equal(sb.DNSSearch, []string{"svc.test"}) || !slices.Equal(sb.DNSOptions, []string{"ndots:2", "edns0"}) {
		t.Errorf("dns %v %v %v", sb.DNS, sb.DNSSearch, sb.DNSOptions)
	}
	if sb.Sysctls["net.ipv4.ping_group_range"] != "0 1" || sb.IpcMode != "shareable" {
		t.Errorf("sysctls %v ipc %q", sb.Sysctls, sb.IpcMode)
	}
	fqdn := specPod(func(p *v1.Pod) { p.Spec.Subdomain = "s"; p.Spec.SetHostnameAsFQDN = ptr.To(true) })
	if h, d := podHostname(fqdn.Spec); h != "web.s.prod.svc.cluster.local" || d != "" {
		t.Errorf("setHostnameAsFQDN: %q %q", h, d)
	}
	long := specPod(func(p *v1.Pod) { p.Name = strings.Repeat("a", 62) + "-bbb" })
	if h, _ := podHostname(long.Spec); h != strings.Repeat("a", 62) {
		t.Errorf("long name: hostname %q", h)
	}
}

func TestDNSMergesHostResolvConf(t *testing.T) {
	rc := func() []byte {
		return []byte("# generated\nnameserver 127.0.0.53\nnameserver 192.0.2.1\nsearch corp.test\noptions ndots:1 rotate\n")
	}
	p := specPod(func(p *v1.Pod) {
		p.Spec.DNSConfig = &v1.PodDNSConfig{Nameservers: []string{"192.0.2.2", "192.0.2.1"}, Searches: []string{"x.test"},
			Options: []v1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("5")}}}
	})
	servers, searches, opts := dnsSettings(p.Spec, rc)
	if !slices.Equal(servers, []string{"192.0.2.1", "192.0.2.2"}) || !slices.Equal(searches, []string{"corp.test", "x.test"}) || !slices.Equal(opts, []string{"rotate", "ndots:5"}) {
		t.Errorf("merged: %v %v %v", servers, searches, opts)
	}
	if s, _, _ := dnsSettings(specPod(nil).Spec, rc); s != nil {
		t.Errorf("no dnsConfig: %v, want the engine's copy of the host file", s)
	}
	hostNet := specPod(func(p *v1.Pod) {
		p.Spec.HostNetwork = true
		p.Spec.DNSConfig = &v1.PodDNSConfig{Searches: []string{"y"}}
	})
	if s, _, _ := dnsSettings(hostNet.Spec, rc); !slices.Equal(s, []string{"127.0.0.53", "192.0.2.1"}) {
		t.Errorf("hostNetwork keeps the local resolver: %v", s)
	}
}

func TestVolumesMapping(t *testing.T) {
	c := mapper(t)
	rt := fake.New(nil)
	root := podfs.New(c.cfg.RootDir)
	host := t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "app.conf"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(host, "escape")); err != nil {
		t.Fatal(err)
	}
	mk := func(mounts ...v1.VolumeMount) *model.Pod {
		return specPod(func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: ptr.To[int64](2000)}
			p.Spec.Volumes = []v1.Volume{
				{Name: "conf", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: host, Type: ptr.To(v1.HostPathDirectory)}}},
				{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
				{Name: "shm", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("16Mi"))}}},
			}
			p.Spec.Containers[0].VolumeMounts = mounts
			p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "NAME", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
		})
	}
	p := mk(
		v1.VolumeMount{Name: "conf", MountPath: "/etc/app/app.conf", SubPath: "app.conf", ReadOnly: true, RecursiveReadOnly: ptr.To(v1.RecursiveReadOnlyEnabled)},
		v1.VolumeMount{Name: "conf", MountPath: "/new", SubPath: "made/here", MountPropagation: ptr.To(v1.MountPropagationHostToContainer)},
		v1.VolumeMount{Name: "data", MountPath: "/data", SubPathExpr: "per/$(NAME)"},
		v1.VolumeMount{Name: "shm", MountPath: "/shm", SubPath: "part"},
	)
	if err := c.EnsureVolumes(t.Context(), rt, p, false); err != nil {
		t.Fatal(err)
	}
	if n := rt.CallCount("CreateVolume"); n != 0 {
		t.Errorf("CreateVolume called %d times without a new sandbox", n)
	}
	if err := c.EnsureVolumes(t.Context(), rt, p, true); err != nil {
		t.Fatal(err)
	}
	uid := string(p.Spec.UID)
	t.Cleanup(func() { // before the temporary directories go: the binds
		if err := root.RemovePod(uid); err != nil {
			t.Error(err)
		}
	})
	cfg := build(t, c, p, runtime.ImageInfo{})
	data, err := c.emptyDirPath(p.Spec, "data")
	if err != nil {
		t.Fatal(err)
	}
	bound := func(volume string, index int) string {
		t.Helper()
		p, err := root.SubpathDir(uid, volume, "app", index)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	termLog, err := root.TerminationLog(uid, "app", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []runtime.Mount{
		{Source: bound("conf", 0), Target: "/etc/app/app.conf", ReadOnly: true, RecursiveReadOnly: "enabled"},
		{Source: bound("conf", 1), Target: "/new", Propagation: "rslave"},
		{Source: bound("data", 2), Target: "/data"},
		{Volume: true, Source: "berth-" + uid + "-shm", Subpath: "part", Target: "/shm"},
		{Source: termLog, Target: "/dev/termination-log"},
	}
	if !slices.Equal(cfg.Mounts, want) {
		t.Errorf("mounts\n got %+v\nwant %+v", cfg.Mounts, want)
	}
	// Each bind holds the subPath's own file.
	for src, dst := range map[string]string{filepath.Join(host, "app.conf"): bound("conf", 0),
		filepath.Join(host, "made/here"): bound("conf", 1), filepath.Join(data, "per/web"): bound("data", 2)} {
		a, err1 := os.Stat(src)
		b, err2 := os.Stat(dst)
		if err1 != nil || err2 != nil || !os.SameFile(a, b) {
			t.Errorf("%s is not a bind of %s: %v %v", dst, src, err1, err2)
		}
	}
	if again := build(t, c, p, runtime.ImageInfo{}); !slices.Equal(again.Mounts, want) {
		t.Errorf("a second container config binds elsewhere: %+v", again.Mounts)
	}
	for _, dir := range []string{data, filepath.Join(data, "per"), filepath.Join(data, "per/web")} {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o777 || fi.Mode()&os.ModeSetgid == 0 || gidOf(fi) != 2000 {
			t.Errorf("%s: mode %v gid %d, want 02777 group 2000", dir, fi.Mode(), gidOf(fi))
		}
	}
	vols := rt.Volumes()
	v, ok := vols["berth-"+string(p.Spec.UID)+"-shm"]
	if !ok || v.SizeBytes != 16<<20 || v.Mode != 0o2777 || v.GID == nil || *v.GID != 2000 {
		t.Errorf("memory volume %+v (present %v), want 16 MiB, mode 2777, gid 2000", v, ok)
	}
	sb := c.SandboxConfig(p, 0, "sha256:pause")
	if len(sb.Mounts) != 1 || !sb.Mounts[0].Volume || sb.Mounts[0].Source != v.Name {
		t.Errorf("sandbox mounts %+v, want it to hold the memory volume", sb.Mounts)
	}

	for sub, msg := range map[string]string{"escape/passwd": "is a symlink", "../x": "relative path inside the volume", "app.conf/x": "not a directory"} {
		bad := mk(v1.VolumeMount{Name: "conf", MountPath: "/x", SubPath: sub})
		_, _, err := c.ContainerConfig(bad, &bad.Spec.Spec.Containers[0], Sandbox{ID: "sb"}, 0, 0, runtime.ImageInfo{}, nil)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("subPath %q: err %v, want %q", sub, err, msg)
		}
	}
	if _, err := os.Stat("/etc/passwd/x"); err == nil {
		t.Error("a subPath wrote through a symlink")
	}

	plain := specPod(func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
		p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "d", MountPath: "/dev/termination-log"}}
	})
	if err := c.EnsureVolumes(t.Context(), rt, plain, true); err != nil {
		t.Fatal(err)
	}
	plainDir, _ := c.emptyDirPath(plain.Spec, "d")
	if fi, err := os.Stat(plainDir); err != nil || fi.Mode().Perm() != 0o777 || fi.Mode()&os.ModeSetgid != 0 {
		t.Errorf("emptyDir without fsGroup: %v %v, want 0777", fi.Mode(), err)
	}
	if cfg := build(t, c, plain, runtime.ImageInfo{}); len(cfg.Mounts) != 1 {
		t.Errorf("a mount at the termination message path replaces the log file: %+v", cfg.Mounts)
	}
}

func TestMemoryVolumeSize(t *testing.T) {
	c := mapper(t)
	mem := func(s string) v1.ResourceRequirements {
		return v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse(s)}}
	}
	vol := &v1.Volume{Name: "m", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}}
	p := specPod(func(p *v1.Pod) {
		p.Spec.Containers = []v1.Container{{Name: "a", Resources: mem("1Gi")}, {Name: "b", Resources: mem("1Gi")}}
		p.Spec.InitContainers = []v1.Container{{Name: "i", Resources: mem("3Gi")}}
	})
	if got := c.memoryVolumeSize(p.Spec, vol); got != 3*gi {
		t.Errorf("pod limit max(2Gi, init 3Gi): %d", got)
	}
	p.Spec.Spec.Containers[1].Resources = v1.ResourceRequirements{}
	if got := c.memoryVolumeSize(p.Spec, vol); got != 8*gi {
		t.Errorf("an unlimited container: node memory, got %d", got)
	}
}

func TestGracePeriodFloor(t *testing.T) {
	c := mapper(t)
	p := specPod(func(p *v1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0) })
	if g := build(t, c, p, runtime.ImageInfo{}).Labels[runtime.LabelGracePeriod]; g != "2" {
		t.Errorf("grace label %q, want the kubelet's minimum 2", g)
	}
}

// TestHashesOfExistingPodsStay pins the hashes of a pod that uses no field
// added since: an upgrade of berth must not recreate running pods.
func TestHashesOfExistingPodsStay(t *testing.T) {
	p := specPod(func(p *v1.Pod) {
		p.Spec.Hostname = "h"
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolTCP}}
		p.Spec.Volumes = []v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
		p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "d", MountPath: "/d"}}
	}).Spec
	type port struct {
		Port   int32
		Proto  v1.Protocol
		HostIP string
		Host   int32
	}
	oldSandbox := hashOf(struct {
		HostNetwork, HostPID bool
		Hostname             string
		Ports                []port
	}{false, false, "h", []port{{80, v1.ProtocolTCP, "", 8080}}})
	if got := SandboxHash(p); got != oldSandbox {
		t.Errorf("sandbox hash %s, was %s", got, oldSandbox)
	}
	oldContainer := hashOf(struct {
		C    *v1.Container
		Vols []v1.Volume
	}{&p.Spec.Containers[0], p.Spec.Volumes})
	if got := ContainerHash(p, &p.Spec.Containers[0]); got != oldContainer {
		t.Errorf("container hash %s, was %s", got, oldContainer)
	}
	changed := p.DeepCopy()
	changed.Spec.HostIPC = true
	if SandboxHash(changed) == oldSandbox {
		t.Error("hostIPC is not in the sandbox hash")
	}
	changed = p.DeepCopy()
	changed.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: ptr.To[int64](5)}
	if ContainerHash(changed, &changed.Spec.Containers[0]) == oldContainer {
		t.Error("the pod securityContext is not in the container hash")
	}
}

// A subPathExpr is checked once expanded: its variables come from the
// manifest, so "$(X)" with X=../.. must not leave the volume, Memory
// emptyDirs (whose subPath the engine resolves) included.
func TestExpandedSubPathStaysInTheVolume(t *testing.T) {
	c := mapper(t)
	for _, medium := range []v1.StorageMedium{v1.StorageMediumDefault, v1.StorageMediumMemory} {
		p := specPod(func(p *v1.Pod) {
			p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: medium}}}}
			p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "X", Value: "../../../../etc"}}
			p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data", SubPathExpr: "$(X)"}}
		})
		_, _, err := c.ContainerConfig(p, &p.Spec.Spec.Containers[0], Sandbox{ID: "sb1"}, 0, 0, runtime.ImageInfo{}, nil)
		if err == nil || !strings.Contains(err.Error(), "not relative inside the volume") || strings.Contains(err.Error(), "../") {
			t.Errorf("%q emptyDir: %v (want a refusal that does not quote the expansion)", medium, err)
		}
	}
}
