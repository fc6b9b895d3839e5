package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podfs"
	"github.com/berth-dev/berth/runtime"
)

// minGracePeriodSeconds is the kubelet's minimumGracePeriodInSeconds.
const minGracePeriodSeconds = 2

// clusterDomain completes the FQDN of pods with a subdomain, as a kubelet's
// default --cluster-domain.
const clusterDomain = "cluster.local"

func hashOf(v interface{}) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("hash: %v", err)) // v1 types always marshal
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// containerHash identifies the spec of one container, so that an edit of
// that container (and only that) changes it. Volumes it mounts are included,
// and the pod-level fields its config is built from; those are omitted when
// unset, so hashes of pods that do not use them stay as they were.
func containerHash(pod *v1.Pod, c *v1.Container) string {
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
		PodSC    *v1.PodSecurityContext `json:",omitempty"`
		SharePID *bool                  `json:",omitempty"`
		Meta     map[string]string      `json:",omitempty"`
		Priority string                 `json:",omitempty"`
	}{c, vols, pod.Spec.SecurityContext, pod.Spec.ShareProcessNamespace, meta, pod.Spec.PriorityClassName})
}

// sandboxHash identifies the pod-level namespaces and the files they share
// (ports, hostname, DNS, hosts, sysctls, Memory emptyDirs); when it changes
// the whole pod is recreated. Fields added since the first release are
// omitted when unset, so existing pods keep their hash.
func sandboxHash(pod *v1.Pod) string {
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
		if isMemoryEmptyDir(&v) {
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

func (c *Controller) labels(p *model.Pod, name, hash string, attempt, restarts int) map[string]string {
	grace := int64(30)
	if p.Spec.Spec.TerminationGracePeriodSeconds != nil {
		// The kubelet's minimum: 0 would be a SIGKILL without a chance.
		grace = max(*p.Spec.Spec.TerminationGracePeriodSeconds, minGracePeriodSeconds)
	}
	return map[string]string{
		runtime.LabelManaged:       "true",
		runtime.LabelPodNamespace:  p.Spec.Namespace,
		runtime.LabelPodName:       p.Spec.Name,
		runtime.LabelPodUID:        string(p.Spec.UID),
		runtime.LabelContainerName: name,
		runtime.LabelContainerHash: hash,
		runtime.LabelSource:        p.Source,
		runtime.LabelNode:          c.cfg.Node,
		runtime.LabelAttempt:       strconv.Itoa(attempt),
		runtime.LabelRestartCount:  strconv.Itoa(restarts),
		runtime.LabelGracePeriod:   strconv.FormatInt(grace, 10),
	}
}

// paths is root_dir as podfs confines it: every host path derived from a
// manifest name (pod UID, volume, container) is made by it, never by
// joining such a name onto a path here.
func (c *Controller) paths() podfs.Root { return podfs.New(c.cfg.RootDir) }

// terminationLogFile is the host file bound at the instance's
// terminationMessagePath, root_dir/pods/<uid>/containers/<name>/<attempt>/termination-log;
// it exists once the instance was created.
func (c *Controller) terminationLogFile(podUID, name string, attempt int) (string, error) {
	return c.paths().TerminationLog(podUID, name, attempt)
}

// terminationLogPath is terminationLogFile for readers: "" (where no file
// is) when podfs refuses the names.
func (c *Controller) terminationLogPath(podUID, name string, attempt int) string {
	p, _ := c.terminationLogFile(podUID, name, attempt)
	return p
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

func (c *Controller) sandboxConfig(p *model.Pod, attempt int) *runtime.ContainerConfig {
	pod := p.Spec
	cfg := &runtime.ContainerConfig{
		Name:        dockerName(pod, model.SandboxName, attempt),
		Image:       c.cfg.PauseImage,
		Labels:      c.labels(p, model.SandboxName, sandboxHash(pod), attempt, 0),
		IpcMode:     "shareable",
		OomScoreAdj: c.clampOOM(sandboxOOMScoreAdj),
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
	cfg.DNS, cfg.DNSSearch, cfg.DNSOptions = dnsSettings(pod, hostResolvConf)
	for _, a := range pod.Spec.HostAliases {
		for _, h := range a.Hostnames {
			cfg.ExtraHosts = append(cfg.ExtraHosts, h+":"+a.IP)
		}
	}
	return cfg
}

// containerConfig maps one v1.Container of the pod onto the engine, joined
// to the namespaces of sandbox sb; image describes its image.
func (c *Controller) containerConfig(p *model.Pod, ctr *v1.Container, sb sandboxRef, attempt, restarts int, image runtime.ImageInfo) (*runtime.ContainerConfig, error) {
	pod := p.Spec
	cfg := &runtime.ContainerConfig{
		Name:        dockerName(pod, ctr.Name, attempt),
		Image:       ctr.Image,
		WorkingDir:  ctr.WorkingDir,
		Labels:      c.labels(p, ctr.Name, containerHash(pod, ctr), attempt, restarts),
		NetworkMode: "container:" + sb.ID,
		IpcMode:     "container:" + sb.ID,
		OpenStdin:   ctr.Stdin,
		StdinOnce:   ctr.StdinOnce,
		Tty:         ctr.TTY,
		OomScoreAdj: c.clampOOM(oomScoreAdj(pod, ctr, c.cfg.NodeInfo.Memory)),
		Resources:   resources(ctr),
	}
	if l := ctr.Lifecycle; l != nil && l.StopSignal != nil {
		cfg.StopSignal = string(*l.StopSignal)
	}
	env, err := c.containerEnv(pod, ctr, sb.ips)
	if err != nil {
		return nil, err
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
	if err := c.applySecurity(cfg, pod, ctr, image); err != nil {
		return nil, err
	}
	for i, m := range ctr.VolumeMounts {
		sub := m.SubPath
		if m.SubPathExpr != "" {
			// Checked again once expanded, as the kubelet does: the
			// variables come from the manifest too.
			sub = expand(m.SubPathExpr, mapping)
			if _, err := podfs.LocalSubPath(sub); sub != "" && err != nil {
				return nil, fmt.Errorf("volumeMount %q: subPathExpr expands to %q, which is not a relative path inside the volume: %w", m.Name, sub, err)
			}
		}
		mnt, err := c.mount(pod, ctr.Name, i, m, sub)
		if err != nil {
			return nil, err
		}
		cfg.Mounts = append(cfg.Mounts, mnt)
	}
	if tm := terminationMessagePath(ctr); tm != "" {
		src, err := c.terminationLogFile(string(pod.UID), ctr.Name, attempt)
		if err != nil {
			return nil, err
		}
		cfg.Mounts = append(cfg.Mounts, runtime.Mount{Source: src, Target: tm})
	}
	return cfg, nil
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

// prepareTerminationLog creates the empty, world-writable host file the
// instance's terminationMessagePath is bound to.
func (c *Controller) prepareTerminationLog(podUID, name string, attempt int) error {
	f, err := c.terminationLogFile(podUID, name, attempt)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(f, nil, 0o666); err != nil {
		return err
	}
	return os.Chmod(f, 0o666)
}

// sandboxRef is the sandbox a container joins and the addresses the
// downward API reports.
type sandboxRef struct {
	ID  string
	ips podIPs
}

// containerEnv resolves the container's env as the kubelet's
// makeEnvironmentVariables: in order, a value expanding $(NAME) against the
// entries before it, valueFrom from the downward API; a later duplicate
// replaces the earlier value.
func (c *Controller) containerEnv(pod *v1.Pod, ctr *v1.Container, ips podIPs) ([]string, error) {
	vars := map[string]string{}
	var order []string
	for _, e := range ctr.Env {
		val := e.Value
		switch {
		case e.ValueFrom == nil:
			val = expand(val, mappingFor(vars))
		case e.ValueFrom.FieldRef != nil:
			v, err := c.fieldRefValue(pod, e.ValueFrom.FieldRef.FieldPath, ips)
			if err != nil {
				return nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
			val = v
		case e.ValueFrom.ResourceFieldRef != nil:
			v, err := c.resourceFieldValue(pod, ctr, e.ValueFrom.ResourceFieldRef)
			if err != nil {
				return nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
			val = v
		default:
			return nil, fmt.Errorf("env %s: valueFrom source not supported by berth", e.Name)
		}
		if _, seen := vars[e.Name]; !seen {
			order = append(order, e.Name)
		}
		vars[e.Name] = val
	}
	env := make([]string, 0, len(order))
	for _, n := range order {
		env = append(env, n+"="+vars[n])
	}
	return env, nil
}

// needsPodIP reports whether the container's env reads the pod's IP.
func needsPodIP(ctr *v1.Container) bool {
	for _, e := range ctr.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && strings.HasPrefix(e.ValueFrom.FieldRef.FieldPath, "status.podIP") {
			return true
		}
	}
	return false
}

// resources maps requests and limits onto Docker's knobs as the kubelet
// does: CPU shares from the request (the limit when none is requested, 2
// when neither), a CFS quota from the limit, the memory limit with no swap
// beyond it. A memory request sets nothing.
func resources(ctr *v1.Container) runtime.Resources {
	r := runtime.Resources{CPUShares: 2}
	req, hasReq := ctr.Resources.Requests[v1.ResourceCPU]
	lim, hasLim := ctr.Resources.Limits[v1.ResourceCPU]
	switch {
	case hasReq:
		r.CPUShares = max(req.MilliValue()*1024/1000, 2)
	case hasLim:
		r.CPUShares = max(lim.MilliValue()*1024/1000, 2) // requests default to limits
	}
	if hasLim {
		r.CPUPeriod = 100000
		r.CPUQuota = max(lim.MilliValue()*r.CPUPeriod/1000, 1000) // the kernel's minimum quota
	}
	if q, ok := ctr.Resources.Limits[v1.ResourceMemory]; ok {
		r.Memory = q.Value()
		r.MemorySwap = r.Memory
	}
	return r
}
