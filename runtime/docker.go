package runtime

import (
	"context"
	"fmt"
	"sync"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
)

// Docker implements Runtime on the Docker Engine API. Each part implements
// one of Runtime's interfaces; all share one engine client and its
// settings.
type Docker struct {
	*dockerEngine
	dockerContainers
	dockerImages
	dockerBuilder
	dockerVolumes
	dockerStreams
}

// dockerEngine is the client and the settings every part of Docker shares.
type dockerEngine struct {
	cli   *client.Client
	creds *Credentials
	logs  ContainerLogs

	logDriverMu sync.Mutex
	logDriver   LogDriver // zero until read (ContainerLogDriver)
}

// dockerContainers is Docker's ContainerManager.
type dockerContainers struct{ *dockerEngine }

// dockerImages is Docker's ImageManager.
type dockerImages struct{ *dockerEngine }

// dockerBuilder is Docker's ImageBuilder.
type dockerBuilder struct{ *dockerEngine }

// dockerVolumes is Docker's VolumeManager.
type dockerVolumes struct{ *dockerEngine }

// dockerStreams is Docker's Streamer, and attaches.
type dockerStreams struct{ *dockerEngine }

var (
	_ Runtime          = (*Docker)(nil)
	_ ContainerManager = (*dockerContainers)(nil)
	_ ImageManager     = (*dockerImages)(nil)
	_ ImageBuilder     = (*dockerBuilder)(nil)
	_ VolumeManager    = (*dockerVolumes)(nil)
	_ Streamer         = (*dockerStreams)(nil)
	_ EventSource      = (*Docker)(nil)
)

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
	e := &dockerEngine{cli: cli}
	return &Docker{
		dockerEngine:     e,
		dockerContainers: dockerContainers{e},
		dockerImages:     dockerImages{e},
		dockerBuilder:    dockerBuilder{e},
		dockerVolumes:    dockerVolumes{e},
		dockerStreams:    dockerStreams{e},
	}, nil
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

// RootDir is the engine's DockerRootDir (GET /info): the directory on the
// engine's host under which it keeps images, containers and volumes.
func (d *Docker) RootDir(ctx context.Context) (string, error) {
	info, err := d.cli.Info(ctx)
	if err != nil {
		return "", fmt.Errorf("docker info: %w", err)
	}
	if info.DockerRootDir == "" {
		return "", fmt.Errorf("docker info: no DockerRootDir")
	}
	return info.DockerRootDir, nil
}
