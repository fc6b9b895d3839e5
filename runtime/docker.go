package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/model"
	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/api/types/versions"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"
	"github.com/docker/go-connections/nat"
)

// Docker implements Runtime on the Docker Engine API.
type Docker struct {
	cli   *client.Client
	creds *Credentials
	logs  ContainerLogs

	logDriverMu sync.Mutex
	logDriver   LogDriver // zero until read (ContainerLogDriver)
}

var _ Runtime = (*Docker)(nil)

// NewDocker connects to the engine at host (DOCKER_HOST and the other
// DOCKER_* variables when host is empty). The API version is negotiated on
// first use, so older engines (Debian's 20.10 speaks 1.41) work.
func NewDocker(host string) (*Docker, error) {
	opts := []client.Opt{client.FromEnv}
	if host != "" {
		opts = append(opts, client.WithHost(host))
	}
	opts = append(opts, client.WithAPIVersionNegotiation())
	cli, err := client.NewClientWithOpts(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	return &Docker{cli: cli}, nil
}

// Client returns the underlying Docker client, for features outside Runtime
// (logs, exec, stats).
func (d *Docker) Client() *client.Client { return d.cli }

// Close releases the client's idle connections.
func (d *Docker) Close() error { return d.cli.Close() }

// Ping reports whether the engine answers.
func (d *Docker) Ping(ctx context.Context) error {
	if _, err := d.cli.Ping(ctx); err != nil {
		return fmt.Errorf("docker ping: %w", err)
	}
	return nil
}

// labelFilters turns match into one label=k=v filter per entry.
func labelFilters(match map[string]string) filters.Args {
	args := filters.NewArgs()
	for k, v := range match {
		args.Add("label", k+"="+v)
	}
	return args
}

func notFound(what, id string, err error) error {
	return fmt.Errorf("%s %s: %w (%w)", what, id, ErrNotFound, err)
}

// ListContainers lists all containers (any state) carrying all labels in
// match, as summaries (see Runtime), sorted by ID. It is one request.
func (d *Docker) ListContainers(ctx context.Context, match map[string]string) ([]*model.Container, error) {
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
func (d *Docker) InspectContainer(ctx context.Context, id string) (*model.Container, error) {
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
func (d *Docker) CreateContainer(ctx context.Context, cfg *ContainerConfig) (string, error) {
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
func (d *Docker) StartContainer(ctx context.Context, id string) error {
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
func (d *Docker) StopContainer(ctx context.Context, id string, grace time.Duration) error {
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
func (d *Docker) RemoveContainer(ctx context.Context, id string) error {
	err := d.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err == nil || cerrdefs.IsNotFound(err) {
		return nil
	}
	if cerrdefs.IsConflict(err) && strings.Contains(err.Error(), "already in progress") {
		return nil
	}
	return fmt.Errorf("remove container %s: %w", id, err)
}

// ImagePresent reports whether image exists locally.
func (d *Docker) ImagePresent(ctx context.Context, img string) (bool, error) {
	_, err := d.InspectImage(ctx, img)
	if errors.Is(err, ErrImageNotFound) {
		return false, nil
	}
	return err == nil, err
}

// InspectImage describes the local image img; ErrImageNotFound when absent.
func (d *Docker) InspectImage(ctx context.Context, img string) (ImageInfo, error) {
	resp, err := d.cli.ImageInspect(ctx, img)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return ImageInfo{}, fmt.Errorf("image %s: %w", img, ErrImageNotFound)
		}
		return ImageInfo{}, fmt.Errorf("inspect image %s: %w", img, err)
	}
	info := ImageInfo{ID: resp.ID, RepoDigests: resp.RepoDigests}
	if resp.Config != nil {
		info.User = resp.Config.User
		info.Labels = resp.Config.Labels
	}
	return info, nil
}

// CreateVolume creates a local-driver tmpfs volume; the engine keeps an
// existing volume of the same name.
func (d *Docker) CreateVolume(ctx context.Context, v VolumeConfig) error {
	if v.Persistent {
		if _, err := d.cli.VolumeCreate(ctx, volume.CreateOptions{Name: v.Name, Driver: "local", Labels: v.Labels}); err != nil {
			return fmt.Errorf("create volume %s: %w", v.Name, err)
		}
		return nil
	}
	o := fmt.Sprintf("mode=%o", v.Mode)
	if v.SizeBytes > 0 {
		o += fmt.Sprintf(",size=%d", v.SizeBytes)
	}
	if v.GID != nil {
		o += fmt.Sprintf(",gid=%d", *v.GID)
	}
	_, err := d.cli.VolumeCreate(ctx, volume.CreateOptions{
		Name: v.Name, Driver: "local", Labels: v.Labels,
		DriverOpts: map[string]string{"type": "tmpfs", "device": "tmpfs", "o": o},
	})
	if err != nil {
		return fmt.Errorf("create volume %s: %w", v.Name, err)
	}
	return nil
}

// RemoveVolume removes a volume; a missing one is not an error.
func (d *Docker) RemoveVolume(ctx context.Context, name string) error {
	err := d.cli.VolumeRemove(ctx, name, false)
	switch {
	case err == nil, cerrdefs.IsNotFound(err):
		return nil
	case cerrdefs.IsConflict(err):
		return fmt.Errorf("remove volume %s: %w: %v", name, ErrVolumeInUse, err)
	}
	return fmt.Errorf("remove volume %s: %w", name, err)
}

// ListVolumes describes the volumes carrying all labels in match.
func (d *Docker) ListVolumes(ctx context.Context, match map[string]string) ([]VolumeInfo, error) {
	list, err := d.cli.VolumeList(ctx, volume.ListOptions{Filters: labelFilters(match)})
	if err != nil {
		return nil, fmt.Errorf("list volumes: %w", err)
	}
	out := make([]VolumeInfo, 0, len(list.Volumes))
	for _, v := range list.Volumes {
		at, _ := time.Parse(time.RFC3339, v.CreatedAt)
		out = append(out, VolumeInfo{Name: v.Name, Labels: v.Labels, CreatedAt: at})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// PullImage pulls img from its registry, logging in with creds' login for
// its registry, else docker.config's, reading the progress stream to the
// end and reporting each change to progress (nil: none); an error reported
// in the stream fails the pull.
func (d *Docker) PullImage(ctx context.Context, img string, creds *Credentials, progress func(PullProgress)) error {
	var opts image.PullOptions
	if auth, ok := creds.Merge(d.creds).For(img); ok {
		enc, err := registry.EncodeAuthConfig(auth)
		if err != nil {
			return fmt.Errorf("pull image %s: credentials: %w", img, err)
		}
		opts.RegistryAuth = enc
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rc, err := d.cli.ImagePull(ctx, img, opts)
	if err != nil {
		return fmt.Errorf("pull image %s: %w", img, err)
	}
	defer rc.Close()
	// A registry that stops sending (a stalled transfer) fails the pull
	// after PullStall without progress, so it backs off and is retried.
	stalled := time.AfterFunc(PullStall, cancel)
	defer stalled.Stop()
	var tracker pullTracker
	onMessage := func(msg *jsonmessage.JSONMessage) {
		if tracker.add(msg) && progress != nil {
			progress(tracker.progress())
		}
	}
	if err := readJSONMessages(&progressReader{r: rc, progress: func() { stalled.Reset(PullStall) }}, onMessage); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("pull image %s: no progress for %s", img, PullStall)
		}
		return fmt.Errorf("pull image %s: %w", img, err)
	}
	return nil
}

// PullStall is how long a pull may go without any progress message.
var PullStall = 2 * time.Minute

// progressReader calls progress on every read that returns data.
type progressReader struct {
	r        io.Reader
	progress func()
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.progress()
	}
	return n, err
}

// drainJSONMessages reads a JSON message stream (pull, build) to its end and
// returns the first error it reports.
func drainJSONMessages(r io.Reader) error { return readJSONMessages(r, nil) }

// readJSONMessages is drainJSONMessages that also hands every message to
// each (nil: none).
func readJSONMessages(r io.Reader, each func(*jsonmessage.JSONMessage)) error {
	dec := json.NewDecoder(r)
	for {
		var msg jsonmessage.JSONMessage
		if err := dec.Decode(&msg); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading engine stream: %w", err)
		}
		if msg.Error != nil {
			return msg.Error
		}
		if msg.ErrorMessage != "" { //nolint:staticcheck // older engines set only this
			return errors.New(msg.ErrorMessage) //nolint:staticcheck
		}
		if each != nil {
			each(&msg)
		}
	}
}

// Events streams lifecycle events of containers carrying all labels in
// match. The event channel is closed when the stream ends; if it ended
// because the engine stream broke (not because ctx ended), the error channel
// yields that one error first.
func (d *Docker) Events(ctx context.Context, match map[string]string) (<-chan Event, <-chan error) {
	args := labelFilters(match)
	args.Add("type", string(events.ContainerEventType))
	msgs, derrs := d.cli.Events(ctx, events.ListOptions{Filters: args})

	out := make(chan Event)
	errs := make(chan error, 1)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case err, ok := <-derrs:
				if ctx.Err() != nil {
					return
				}
				if !ok || err == nil {
					err = io.ErrUnexpectedEOF
				}
				errs <- fmt.Errorf("docker events: %w", err)
				return
			case m := <-msgs:
				action := string(m.Action)
				if i := strings.Index(action, ":"); i >= 0 {
					action = action[:i] // "exec_start: sh -c ..." → "exec_start"
				}
				ev := Event{ContainerID: m.Actor.ID, Action: action, Time: time.Unix(0, m.TimeNano), Attributes: m.Actor.Attributes}
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, errs
}
