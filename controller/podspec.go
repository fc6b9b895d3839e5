package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

func hashOf(v interface{}) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("hash: %v", err)) // v1 types always marshal
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// containerHash identifies the spec of one container, so that an edit of
// that container (and only that) changes it. Volumes it mounts are included.
func containerHash(pod *v1.Pod, c *v1.Container) string {
	var vols []v1.Volume
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Spec.Volumes {
			if v.Name == m.Name {
				vols = append(vols, v)
			}
		}
	}
	return hashOf(struct {
		C    *v1.Container
		Vols []v1.Volume
	}{c, vols})
}

// sandboxHash identifies the pod-level networking; when it changes the whole
// pod is recreated.
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
	return hashOf(struct {
		HostNetwork, HostPID bool
		Hostname             string
		Ports                []port
	}{pod.Spec.HostNetwork, pod.Spec.HostPID, pod.Spec.Hostname, ports})
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
		grace = *p.Spec.Spec.TerminationGracePeriodSeconds
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

// podDir is root_dir/pods/<uid>.
func (c *Controller) podDir(uid string) string {
	return filepath.Join(c.cfg.RootDir, "pods", uid)
}

func (c *Controller) sandboxConfig(p *model.Pod, attempt int) *runtime.ContainerConfig {
	pod := p.Spec
	cfg := &runtime.ContainerConfig{
		Name:     dockerName(pod, model.SandboxName, attempt),
		Image:    c.cfg.PauseImage,
		Labels:   c.labels(p, model.SandboxName, sandboxHash(pod), attempt, 0),
		Hostname: pod.Name,
	}
	if pod.Spec.Hostname != "" {
		cfg.Hostname = pod.Spec.Hostname
	}
	if pod.Spec.HostNetwork {
		cfg.NetworkMode = "host"
		cfg.Hostname = ""
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
	return cfg
}

// containerConfig maps one v1.Container of the pod onto the engine, joined to
// the network namespace of sandboxID.
func (c *Controller) containerConfig(p *model.Pod, ctr *v1.Container, sandboxID string, attempt, restarts int) (*runtime.ContainerConfig, error) {
	pod := p.Spec
	cfg := &runtime.ContainerConfig{
		Name:        dockerName(pod, ctr.Name, attempt),
		Image:       ctr.Image,
		WorkingDir:  ctr.WorkingDir,
		Labels:      c.labels(p, ctr.Name, containerHash(pod, ctr), attempt, restarts),
		NetworkMode: "container:" + sandboxID,
	}
	if len(ctr.Command) > 0 {
		cfg.Entrypoint = append([]string{}, ctr.Command...)
	}
	if len(ctr.Args) > 0 {
		cfg.Cmd = append([]string{}, ctr.Args...)
	}
	if pod.Spec.HostPID {
		cfg.PidMode = "host"
	}
	if pod.Spec.HostIPC {
		cfg.IpcMode = "host"
	}
	for _, e := range ctr.Env {
		if e.ValueFrom != nil {
			continue // validation rejects valueFrom; nothing to resolve it from
		}
		cfg.Env = append(cfg.Env, e.Name+"="+expandEnv(e.Value, ctr.Env))
	}
	cfg.Resources = resources(ctr)
	if sc := ctr.SecurityContext; sc != nil {
		if sc.Privileged != nil {
			cfg.Privileged = *sc.Privileged
		}
		if sc.RunAsUser != nil {
			cfg.User = strconv.FormatInt(*sc.RunAsUser, 10)
			if sc.RunAsGroup != nil {
				cfg.User += ":" + strconv.FormatInt(*sc.RunAsGroup, 10)
			}
		}
		if sc.ReadOnlyRootFilesystem != nil {
			cfg.ReadonlyRootfs = *sc.ReadOnlyRootFilesystem
		}
		if caps := sc.Capabilities; caps != nil {
			for _, cp := range caps.Add {
				cfg.CapAdd = append(cfg.CapAdd, string(cp))
			}
			for _, cp := range caps.Drop {
				cfg.CapDrop = append(cfg.CapDrop, string(cp))
			}
		}
	}
	for _, m := range ctr.VolumeMounts {
		mnt, err := c.mount(pod, m)
		if err != nil {
			return nil, err
		}
		cfg.Mounts = append(cfg.Mounts, mnt)
	}
	return cfg, nil
}

func (c *Controller) mount(pod *v1.Pod, m v1.VolumeMount) (runtime.Mount, error) {
	for _, v := range pod.Spec.Volumes {
		if v.Name != m.Name {
			continue
		}
		switch {
		case v.HostPath != nil:
			t := v1.HostPathUnset
			if v.HostPath.Type != nil {
				t = *v.HostPath.Type
			}
			if t == v1.HostPathUnset || t == v1.HostPathDirectoryOrCreate {
				// The engine creates the directory on the host, which also
				// works when berth itself runs in a container.
				return runtime.Mount{Source: v.HostPath.Path, Target: m.MountPath, ReadOnly: m.ReadOnly, CreateHostDir: true}, nil
			}
			if err := prepareHostPath(v.HostPath); err != nil {
				return runtime.Mount{}, fmt.Errorf("volume %q: %w", v.Name, err)
			}
			return runtime.Mount{Source: v.HostPath.Path, Target: m.MountPath, ReadOnly: m.ReadOnly}, nil
		case v.EmptyDir != nil && v.EmptyDir.Medium == v1.StorageMediumMemory:
			return runtime.Mount{Target: m.MountPath, Tmpfs: true, ReadOnly: m.ReadOnly}, nil
		case v.EmptyDir != nil:
			return runtime.Mount{Source: c.emptyDirPath(pod, v.Name), Target: m.MountPath, ReadOnly: m.ReadOnly}, nil
		}
		return runtime.Mount{}, fmt.Errorf("volume %q: unsupported volume type", v.Name)
	}
	return runtime.Mount{}, fmt.Errorf("volumeMount %q: no such volume", m.Name)
}

// containerDir is root_dir/pods/<uid>/containers/<name>/<attempt>: files the
// controller binds into one instance (its termination log).
func (c *Controller) containerDir(podUID, name string, attempt int) string {
	return filepath.Join(c.podDir(podUID), "containers", name, strconv.Itoa(attempt))
}

// terminationLogPath is the host file bound at the instance's
// terminationMessagePath; it exists once the instance was created.
func (c *Controller) terminationLogPath(podUID, name string, attempt int) string {
	return filepath.Join(c.containerDir(podUID, name, attempt), "termination-log")
}

func (c *Controller) emptyDirPath(pod *v1.Pod, volume string) string {
	return filepath.Join(c.podDir(string(pod.UID)), "volumes", volume)
}

// resources maps requests/limits onto Docker's knobs as the kubelet does.
func resources(ctr *v1.Container) runtime.Resources {
	var r runtime.Resources
	if q, ok := ctr.Resources.Requests[v1.ResourceCPU]; ok {
		r.CPUShares = q.MilliValue() * 1024 / 1000
		if r.CPUShares < 2 {
			r.CPUShares = 2
		}
	}
	if q, ok := ctr.Resources.Limits[v1.ResourceCPU]; ok {
		r.CPUPeriod = 100000
		r.CPUQuota = q.MilliValue() * r.CPUPeriod / 1000
		if r.CPUQuota < 1000 {
			r.CPUQuota = 1000 // the kernel's minimum quota
		}
		if _, ok := ctr.Resources.Requests[v1.ResourceCPU]; !ok {
			r.CPUShares = q.MilliValue() * 1024 / 1000 // requests default to limits
			if r.CPUShares < 2 {
				r.CPUShares = 2
			}
		}
	}
	if q, ok := ctr.Resources.Limits[v1.ResourceMemory]; ok {
		r.Memory = q.Value()
	}
	if q, ok := ctr.Resources.Requests[v1.ResourceMemory]; ok {
		r.MemoryReservation = q.Value()
	}
	return r
}

// expandEnv resolves $(VAR) references to earlier env entries, as Kubernetes
// does; $$(VAR) escapes.
func expandEnv(val string, env []v1.EnvVar) string {
	if !strings.Contains(val, "$(") {
		return val
	}
	lookup := map[string]string{}
	for _, e := range env {
		lookup[e.Name] = e.Value
	}
	var b strings.Builder
	for i := 0; i < len(val); i++ {
		if strings.HasPrefix(val[i:], "$$(") {
			b.WriteString("$(")
			i += 2
			continue
		}
		if strings.HasPrefix(val[i:], "$(") {
			if end := strings.IndexByte(val[i:], ')'); end > 2 {
				name := val[i+2 : i+end]
				if v, ok := lookup[name]; ok {
					b.WriteString(v)
					i += end
					continue
				}
			}
		}
		b.WriteByte(val[i])
	}
	return b.String()
}

// prepareHostPath enforces the typed hostPath checks as the kubelet does, on
// berth's view of the filesystem (when berth runs in a container, mount the
// paths typed pods use at the same place).
func prepareHostPath(hp *v1.HostPathVolumeSource) error {
	t := v1.HostPathUnset
	if hp.Type != nil {
		t = *hp.Type
	}
	fi, err := os.Stat(hp.Path)
	exists := err == nil
	switch t {
	case v1.HostPathFileOrCreate:
		if !exists {
			if err := os.MkdirAll(filepath.Dir(hp.Path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(hp.Path, os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			return f.Close()
		}
	case v1.HostPathDirectory:
		if !exists || !fi.IsDir() {
			return fmt.Errorf("hostPath type check failed: %s is not a directory", hp.Path)
		}
	case v1.HostPathFile:
		if !exists || !fi.Mode().IsRegular() {
			return fmt.Errorf("hostPath type check failed: %s is not a file", hp.Path)
		}
	case v1.HostPathSocket:
		if !exists || fi.Mode()&os.ModeSocket == 0 {
			return fmt.Errorf("hostPath type check failed: %s is not a socket", hp.Path)
		}
	case v1.HostPathCharDev:
		if !exists || fi.Mode()&os.ModeCharDevice == 0 {
			return fmt.Errorf("hostPath type check failed: %s is not a character device", hp.Path)
		}
	case v1.HostPathBlockDev:
		if !exists || fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
			return fmt.Errorf("hostPath type check failed: %s is not a block device", hp.Path)
		}
	}
	return nil
}
