package podconfig

import (
	"fmt"
	"path"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podfs"
	"github.com/berth-dev/berth/runtime"
)

// clusterDomain completes the FQDN of pods with a subdomain, as a kubelet's
// default --cluster-domain.
const clusterDomain = "cluster.local"

func uid8(uid string) string {
	s := strings.ReplaceAll(uid, "-", "")
	if len(s) > 8 {
		s = s[:8]
	}
	return s
}

// dockerName is berth_<container>_<pod>_<namespace>_<uid8>_<attempt>.
func dockerName(pod *v1.Pod, container string, attempt int) string {
	return fmt.Sprintf("berth_%s_%s_%s_%s_%d", container, pod.Name, pod.Namespace, uid8(string(pod.UID)), attempt)
}

// labels are the labels of container name of p (model.SandboxName: its
// sandbox), whose spec hashes to hash; the grace period is the pod's, at
// least the kubelet's minimum (0 would be a SIGKILL without a chance); the
// pod's creation time, so that a restarted berth serves it again.
func (b *Builder) labels(p *model.Pod, name, hash string, attempt, restarts int) runtime.ContainerLabels {
	grace := model.DefaultGracePeriodSeconds
	if g := p.Spec.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = max(*g, model.MinGracePeriodSeconds)
	}
	return runtime.ContainerLabels{
		Namespace: p.Spec.Namespace, Pod: p.Spec.Name, PodUID: string(p.Spec.UID), Container: name, Hash: hash,
		Source: p.Source, Node: b.cfg.Node, Attempt: attempt, RestartCount: restarts, GracePeriod: &grace,
		PodCreated: p.SeenAt,
	}
}

// containerLabels are the labels of app container ctr of p joined to
// sandbox sbID: labels, with the sandbox, the preStop hook, hostNetwork and
// a sidecar's index.
func (b *Builder) containerLabels(p *model.Pod, ctr *v1.Container, sbID string, attempt, restarts int) map[string]string {
	l := b.labels(p, ctr.Name, ContainerHash(p.Spec, ctr), attempt, restarts)
	l.Sandbox = sbID
	if ctr.Lifecycle != nil && ctr.Lifecycle.PreStop != nil {
		l.PreStop = &runtime.PreStop{Handler: ctr.Lifecycle.PreStop, Ports: ctr.Ports}
	}
	l.HostNetwork = p.Spec.Spec.HostNetwork
	for i := range p.Spec.Spec.InitContainers {
		if ic := &p.Spec.Spec.InitContainers[i]; ic.Name == ctr.Name && model.IsSidecar(ic) {
			l.Sidecar = &i
		}
	}
	return l.Encode()
}

// terminationLogFile is the host file bound at the instance's
// terminationMessagePath, root_dir/pods/<uid>/containers/<name>/<attempt>/termination-log;
// it exists once PrepareTerminationLog made it.
func (b *Builder) terminationLogFile(podUID, name string, attempt int) (string, error) {
	return b.paths.TerminationLog(podUID, name, attempt)
}

// podHostname is the sandbox's hostname and domain as the kubelet's
// GeneratePodHostNameAndDomain: spec.hostname or the pod name truncated to
// 63 characters; with a subdomain the domain is
// <subdomain>.<namespace>.svc.<cluster domain>, and setHostnameAsFQDN
// makes the hostname the whole FQDN.
func podHostname(pod *v1.Pod) (hostname, domain string) {
	hostname = pod.Name
	if pod.Spec.Hostname != "" {
		hostname = pod.Spec.Hostname
	}
	if len(hostname) > 63 {
		hostname = strings.TrimRight(hostname[:63], "-.")
	}
	if pod.Spec.Subdomain != "" {
		domain = pod.Spec.Subdomain + "." + pod.Namespace + ".svc." + clusterDomain
	}
	if pod.Spec.SetHostnameAsFQDN != nil && *pod.Spec.SetHostnameAsFQDN && domain != "" {
		return hostname + "." + domain, ""
	}
	return hostname, domain
}

// SandboxConfig is the config of the pod's sandbox (the pause container
// holding its namespaces), instance attempt, made from image: the pause
// image's ID, never a tag that may have moved since it was checked.
func (b *Builder) SandboxConfig(p *model.Pod, attempt int, image string) *runtime.ContainerConfig {
	pod := p.Spec
	cfg := &runtime.ContainerConfig{
		Name:        dockerName(pod, model.SandboxName, attempt),
		Image:       image,
		Labels:      b.labels(p, model.SandboxName, SandboxHash(pod), attempt, 0).Encode(),
		IpcMode:     "shareable",
		OomScoreAdj: b.clampOOM(sandboxOOMScoreAdj),
		Mounts:      sandboxMounts(pod),
	}
	cfg.Hostname, cfg.Domainname = podHostname(pod)
	if pod.Spec.HostNetwork {
		cfg.NetworkMode = "host"
		cfg.Hostname, cfg.Domainname = "", ""
	} else {
		for _, ctr := range pod.Spec.Containers {
			for _, port := range ctr.Ports {
				cfg.Ports = append(cfg.Ports, runtime.PortBinding{
					ContainerPort: int(port.ContainerPort),
					Protocol:      strings.ToLower(string(port.Protocol)),
					HostIP:        port.HostIP,
					HostPort:      int(port.HostPort),
				})
			}
		}
	}
	if pod.Spec.HostPID {
		cfg.PidMode = "host"
	}
	if pod.Spec.HostIPC {
		cfg.IpcMode = "host"
	}
	if sc := pod.Spec.SecurityContext; sc != nil && len(sc.Sysctls) > 0 {
		cfg.Sysctls = map[string]string{}
		for _, s := range sc.Sysctls {
			cfg.Sysctls[s.Name] = s.Value
		}
	}
	cfg.DNS, cfg.DNSSearch, cfg.DNSOptions = dnsSettings(pod, b.hostResolvConf)
	for _, a := range pod.Spec.HostAliases {
		for _, h := range a.Hostnames {
			cfg.ExtraHosts = append(cfg.ExtraHosts, h+":"+a.IP)
		}
	}
	return cfg
}

// ContainerConfig maps one v1.Container of the pod onto the engine, joined
// to the namespaces of sandbox sb; image describes its image. It binds the
// subPaths of the container's mounts, so the pod's emptyDirs must exist
// (EnsureVolumes), and mounts the termination log PrepareTerminationLog
// made.
func (b *Builder) ContainerConfig(p *model.Pod, ctr *v1.Container, sb Sandbox, attempt, restarts int, image runtime.ImageInfo, objs Objects) (cfg *runtime.ContainerConfig, warnings []string, err error) {
	pod := p.Spec
	cfg = &runtime.ContainerConfig{
		Name:        dockerName(pod, ctr.Name, attempt),
		Image:       ctr.Image,
		WorkingDir:  ctr.WorkingDir,
		Labels:      b.containerLabels(p, ctr, sb.ID, attempt, restarts),
		NetworkMode: "container:" + sb.ID,
		IpcMode:     "container:" + sb.ID,
		OpenStdin:   ctr.Stdin,
		StdinOnce:   ctr.StdinOnce,
		Tty:         ctr.TTY,
		OomScoreAdj: b.clampOOM(oomScoreAdj(pod, ctr, b.cfg.NodeInfo.Memory)),
		Resources:   resources(pod, ctr),
	}
	if l := ctr.Lifecycle; l != nil && l.StopSignal != nil {
		cfg.StopSignal = string(*l.StopSignal)
	}
	env, skipped, err := b.env.containerEnv(pod, ctr, sb.IPs, objs)
	if err != nil {
		return nil, nil, err
	}
	if len(skipped) > 0 {
		warnings = append(warnings, fmt.Sprintf("Keys %v from envFrom were skipped since they are invalid environment variable names", skipped))
	}
	vars := map[string]string{}
	for _, e := range env {
		name, val, _ := strings.Cut(e, "=")
		vars[name] = val
	}
	cfg.Env = env
	mapping := mappingFor(vars)
	for _, s := range ctr.Command {
		cfg.Entrypoint = append(cfg.Entrypoint, expand(s, mapping))
	}
	for _, s := range ctr.Args {
		cfg.Cmd = append(cfg.Cmd, expand(s, mapping))
	}
	switch {
	case pod.Spec.HostPID:
		cfg.PidMode = "host"
	case pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace:
		cfg.PidMode = "container:" + sb.ID
	}
	if pod.Spec.HostIPC {
		cfg.IpcMode = "host"
	}
	if err := b.applySecurity(cfg, pod, ctr, image); err != nil {
		return nil, nil, err
	}
	for i, m := range ctr.VolumeMounts {
		sub := m.SubPath
		if m.SubPathExpr != "" {
			// Checked again once expanded, as the kubelet does: the
			// variables come from the manifest too.
			sub = expand(m.SubPathExpr, mapping)
			if _, err := podfs.LocalSubPath(sub); sub != "" && err != nil {
				// The expansion is not quoted: it may come from a Secret.
				return nil, nil, fmt.Errorf("volumeMount %q: subPathExpr %q expands to a path that is not relative inside the volume", m.Name, m.SubPathExpr)
			}
		}
		mnt, err := b.mount(pod, p.Source, ctr.Name, i, m, sub)
		if err != nil {
			return nil, nil, err
		}
		cfg.Mounts = append(cfg.Mounts, mnt)
	}
	if tm := terminationMessagePath(ctr); tm != "" {
		src, err := b.terminationLogFile(string(pod.UID), ctr.Name, attempt)
		if err != nil {
			return nil, nil, err
		}
		cfg.Mounts = append(cfg.Mounts, runtime.Mount{Source: src, Target: tm})
	}
	return cfg, warnings, nil
}

// terminationMessagePath is where the container writes its termination
// message ("" when some mount already covers that path).
func terminationMessagePath(ctr *v1.Container) string {
	tm := ctr.TerminationMessagePath
	if tm == "" {
		tm = v1.TerminationMessagePathDefault
	}
	for _, m := range ctr.VolumeMounts {
		if path.Clean(m.MountPath) == path.Clean(tm) {
			return ""
		}
	}
	return tm
}

// PrepareTerminationLog creates the empty, world-writable host file the
// instance's terminationMessagePath is bound to.
func (b *Builder) PrepareTerminationLog(podUID, name string, attempt int) error {
	_, err := b.paths.MakeTerminationLog(podUID, name, attempt)
	return err
}

// Sandbox is the sandbox a container joins and the addresses the downward
// API reports.
type Sandbox struct {
	ID  string
	IPs PodIPs
}

// NeedsPodIP reports whether the container's env reads the pod's IP, which
// ContainerConfig then needs in its Sandbox.
func NeedsPodIP(ctr *v1.Container) bool {
	for _, e := range ctr.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && strings.HasPrefix(e.ValueFrom.FieldRef.FieldPath, "status.podIP") {
			return true
		}
	}
	return false
}
