package runtime

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/berth-dev/berth/model"
	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/versions"
	"github.com/docker/go-connections/nat"
)

// ListContainers lists all containers (any state) carrying all labels in
// match, as summaries (see Runtime), sorted by ID. It is one request.
func (d *dockerContainers) ListContainers(ctx context.Context, match map[string]string) ([]*model.Container, error) {
	list, err := d.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: labelFilters(match)})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	out := make([]*model.Container, 0, len(list))
	for _, s := range list {
		c := &model.Container{ID: s.ID, Image: s.Image, ImageID: s.ImageID, State: string(s.State)}
		if len(s.Names) > 0 {
			c.DockerName = strings.TrimPrefix(s.Names[0], "/")
		}
		if s.Created > 0 {
			c.CreatedAt = time.Unix(s.Created, 0)
		}
		if s.NetworkSettings != nil {
			for _, n := range s.NetworkSettings.Networks {
				if c.IP == "" && n != nil {
					c.IP = n.IPAddress
				}
			}
		}
		labels := s.Labels
		if labels == nil {
			labels = map[string]string{}
		}
		FillFromLabels(c, labels)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// parseDockerTime parses an RFC 3339 engine timestamp; Docker's zero time
// ("0001-01-01T00:00:00Z") and unparsable values become the Go zero time.
func parseDockerTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() <= 1 {
		return time.Time{}
	}
	return t
}

// InspectContainer returns one container in store form; ErrNotFound if gone.
func (d *dockerContainers) InspectContainer(ctx context.Context, id string) (*model.Container, error) {
	resp, err := d.cli.ContainerInspect(ctx, id)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil, notFound("container", id, err)
		}
		return nil, fmt.Errorf("inspect container %s: %w", id, err)
	}
	return convertInspect(resp), nil
}

func convertInspect(resp container.InspectResponse) *model.Container {
	c := &model.Container{}
	var labels map[string]string
	if resp.ContainerJSONBase != nil {
		c.ID = resp.ID
		c.DockerName = strings.TrimPrefix(resp.Name, "/")
		c.ImageID = resp.Image
		c.CreatedAt = parseDockerTime(resp.Created)
		if st := resp.State; st != nil {
			c.State = string(st.Status)
			c.ExitCode = st.ExitCode
			c.OOMKilled = st.OOMKilled
			c.Error = st.Error
			c.StartedAt = parseDockerTime(st.StartedAt)
			c.FinishedAt = parseDockerTime(st.FinishedAt)
		}
	}
	if resp.Config != nil {
		c.Image = resp.Config.Image
		labels = resp.Config.Labels
	}
	if ns := resp.NetworkSettings; ns != nil {
		for _, n := range ns.Networks {
			if c.IP == "" && n != nil {
				c.IP = n.IPAddress
			}
		}
	}
	if labels == nil {
		labels = map[string]string{}
	}
	FillFromLabels(c, labels)
	return c
}

// CreateContainer creates (does not start) a container, its logs rotated
// as SetContainerLogs says on an engine whose log driver writes files
// (ContainerLogDriver), and returns its ID.
// A name already in use yields an error wrapping ErrNameConflict.
func (d *dockerContainers) CreateContainer(ctx context.Context, cfg *ContainerConfig) (string, error) {
	config, hostConfig, err := dockerConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("create container %s: %w", cfg.Name, err)
	}
	driver, err := d.ContainerLogDriver(ctx)
	if err != nil {
		return "", fmt.Errorf("create container %s: %w", cfg.Name, err)
	}
	hostConfig.LogConfig = d.logs.logConfig(driver)
	if err := volumeSubpathSupported(cfg.Mounts, d.cli.ClientVersion()); err != nil {
		return "", fmt.Errorf("create container %s: %w", cfg.Name, err)
	}
	resp, err := d.cli.ContainerCreate(ctx, config, hostConfig, nil, nil, cfg.Name)
	if err != nil {
		if cerrdefs.IsConflict(err) {
			return "", fmt.Errorf("create container %s: %w (%w)", cfg.Name, ErrNameConflict, err)
		}
		if cerrdefs.IsNotFound(err) {
			if strings.Contains(err.Error(), "No such image") {
				return "", fmt.Errorf("create container %s: %w (%w)", cfg.Name, ErrImageNotFound, err)
			}
			return "", fmt.Errorf("create container %s: %w (%w)", cfg.Name, ErrNotFound, err)
		}
		return "", fmt.Errorf("create container %s: %w", cfg.Name, err)
	}
	return resp.ID, nil
}

// dockerConfig maps a ContainerConfig to the engine's create request.
func dockerConfig(cfg *ContainerConfig) (*container.Config, *container.HostConfig, error) {
	netMode := container.NetworkMode(cfg.NetworkMode)
	config := &container.Config{
		Image:       cfg.Image,
		Env:         cfg.Env,
		WorkingDir:  cfg.WorkingDir,
		Labels:      cfg.Labels,
		User:        cfg.User,
		OpenStdin:   cfg.OpenStdin,
		StdinOnce:   cfg.StdinOnce,
		Tty:         cfg.Tty,
		StopSignal:  cfg.StopSignal,
		StopTimeout: cfg.StopTimeout,
	}
	if cfg.Entrypoint != nil {
		config.Entrypoint = cfg.Entrypoint
	}
	if cfg.Cmd != nil {
		config.Cmd = cfg.Cmd
	}
	// The engine rejects a hostname, DNS and hosts settings for a container
	// joining another's network namespace: it shares that container's.
	if !netMode.IsContainer() {
		config.Hostname = cfg.Hostname
		config.Domainname = cfg.Domainname
	}

	hostConfig := &container.HostConfig{
		RestartPolicy:  container.RestartPolicy{Name: container.RestartPolicyDisabled},
		NetworkMode:    netMode,
		PidMode:        container.PidMode(cfg.PidMode),
		IpcMode:        container.IpcMode(cfg.IpcMode),
		Privileged:     cfg.Privileged,
		ReadonlyRootfs: cfg.ReadonlyRootfs,
		CapAdd:         cfg.CapAdd,
		CapDrop:        cfg.CapDrop,
		GroupAdd:       cfg.GroupAdd,
		SecurityOpt:    cfg.SecurityOpt,
		Sysctls:        cfg.Sysctls,
		OomScoreAdj:    cfg.OomScoreAdj,
		Resources: container.Resources{
			CPUShares:  cfg.Resources.CPUShares,
			CPUQuota:   cfg.Resources.CPUQuota,
			CPUPeriod:  cfg.Resources.CPUPeriod,
			Memory:     cfg.Resources.Memory,
			MemorySwap: cfg.Resources.MemorySwap,
		},
	}
	if !netMode.IsContainer() {
		hostConfig.DNS = cfg.DNS
		hostConfig.DNSSearch = cfg.DNSSearch
		hostConfig.DNSOptions = cfg.DNSOptions
		hostConfig.ExtraHosts = cfg.ExtraHosts
	}
	if cfg.UnmaskProc {
		hostConfig.MaskedPaths = []string{}
		hostConfig.ReadonlyPaths = []string{}
	}

	for _, p := range cfg.Ports {
		proto := strings.ToLower(p.Protocol)
		if proto == "" {
			proto = "tcp"
		}
		port, err := nat.NewPort(proto, strconv.Itoa(p.ContainerPort))
		if err != nil {
			return nil, nil, fmt.Errorf("port %d/%s: %w", p.ContainerPort, proto, err)
		}
		if p.HostPort == 0 {
			// Exposed only; the engine refuses any port config for a
			// container in another container's network namespace.
			if !netMode.IsContainer() {
				if config.ExposedPorts == nil {
					config.ExposedPorts = nat.PortSet{}
				}
				config.ExposedPorts[port] = struct{}{}
			}
			continue
		}
		if config.ExposedPorts == nil {
			config.ExposedPorts = nat.PortSet{}
		}
		config.ExposedPorts[port] = struct{}{}
		if hostConfig.PortBindings == nil {
			hostConfig.PortBindings = nat.PortMap{}
		}
		hostConfig.PortBindings[port] = append(hostConfig.PortBindings[port], nat.PortBinding{
			HostIP:   p.HostIP,
			HostPort: strconv.Itoa(p.HostPort),
		})
	}

	for _, m := range cfg.Mounts {
		mnt, bind, err := dockerMount(m)
		if err != nil {
			return nil, nil, err
		}
		if bind != "" {
			hostConfig.Binds = append(hostConfig.Binds, bind)
		} else {
			hostConfig.Mounts = append(hostConfig.Mounts, mnt)
		}
	}
	return config, hostConfig, nil
}

// volumeSubpathAPI is the first engine API that mounts a subpath of a
// volume (Docker 26); an older engine ignores the field and mounts the
// whole volume.
const volumeSubpathAPI = "1.45"

// volumeSubpathSupported refuses a volume subpath (of a claim or a Memory
// emptyDir) that an engine speaking api would silently widen to the whole
// volume.
func volumeSubpathSupported(mounts []Mount, api string) error {
	for _, m := range mounts {
		if m.Volume && m.Subpath != "" && versions.LessThan(api, volumeSubpathAPI) {
			return fmt.Errorf("subPath %q of volume %s needs Docker API %s (Docker 26) or later; this engine speaks %s", m.Subpath, m.Source, volumeSubpathAPI, api)
		}
	}
	return nil
}

// dockerMount maps one Mount to the engine's mount, or to a legacy bind
// string when the engine must create a missing host directory.
func dockerMount(m Mount) (mount.Mount, string, error) {
	if m.Target == "" {
		return mount.Mount{}, "", fmt.Errorf("mount of %q: empty target", m.Source)
	}
	switch {
	case m.Tmpfs:
		return mount.Mount{Type: mount.TypeTmpfs, Target: m.Target, ReadOnly: m.ReadOnly}, "", nil
	case m.Volume:
		return mount.Mount{Type: mount.TypeVolume, Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly,
			VolumeOptions: &mount.VolumeOptions{NoCopy: true, Subpath: m.Subpath}}, "", nil
	case m.CreateHostDir:
		// The legacy bind form makes dockerd create a missing source
		// directory on the host, which berth in a container cannot.
		opts := []string{}
		if m.ReadOnly {
			opts = append(opts, "ro")
		}
		if m.Propagation != "" {
			opts = append(opts, m.Propagation)
		}
		bind := m.Source + ":" + m.Target
		if len(opts) > 0 {
			bind += ":" + strings.Join(opts, ",")
		}
		if m.RecursiveReadOnly == "" {
			return mount.Mount{}, bind, nil
		}
		// Bind options beyond ro and propagation need the mount form; the
		// directory is made by the engine's CreateMountpoint instead.
	}
	mnt := mount.Mount{Type: mount.TypeBind, Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly}
	bo := &mount.BindOptions{Propagation: mount.Propagation(m.Propagation), CreateMountpoint: m.CreateHostDir}
	switch m.RecursiveReadOnly {
	case "disabled":
		bo.ReadOnlyNonRecursive = m.ReadOnly
	case "enabled":
		bo.ReadOnlyForceRecursive = m.ReadOnly
	}
	if *bo != (mount.BindOptions{}) {
		mnt.BindOptions = bo
	}
	return mnt, "", nil
}

// StartContainer starts a created or exited container.
func (d *dockerContainers) StartContainer(ctx context.Context, id string) error {
	if err := d.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		if cerrdefs.IsNotFound(err) {
			return fmt.Errorf("start container: %w", notFound("container", id, err))
		}
		return fmt.Errorf("start container %s: %w", id, err)
	}
	return nil
}

// StopContainer sends the stop signal, waits up to grace (rounded up to whole
// seconds), then kills. A missing or already stopped container is not an
// error.
func (d *dockerContainers) StopContainer(ctx context.Context, id string, grace time.Duration) error {
	secs := graceSeconds(grace)
	if err := d.cli.ContainerStop(ctx, id, container.StopOptions{Timeout: &secs}); err != nil {
		if cerrdefs.IsNotFound(err) || cerrdefs.IsNotModified(err) {
			return nil
		}
		return fmt.Errorf("stop container %s: %w", id, err)
	}
	return nil
}

// graceSeconds converts a grace period to the engine's whole-second stop
// timeout, rounding up; negative becomes 0.
func graceSeconds(grace time.Duration) int {
	if grace <= 0 {
		return 0
	}
	return int(math.Ceil(grace.Seconds()))
}

// RemoveContainer force-removes a container and its anonymous volumes. A
// missing container, or one whose removal is already in progress, is not an
// error.
func (d *dockerContainers) RemoveContainer(ctx context.Context, id string) error {
	err := d.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err == nil || cerrdefs.IsNotFound(err) {
		return nil
	}
	if cerrdefs.IsConflict(err) && strings.Contains(err.Error(), "already in progress") {
		return nil
	}
	return fmt.Errorf("remove container %s: %w", id, err)
}
