package runtime

import (
	"context"
	"fmt"
	"strconv"

	"github.com/docker/docker/api/types/container"
)

// ContainerLogs is the log rotation of every container berth creates
// (sandboxes included) when the engine's default log driver writes files
// (json-file, local; see LogDriver): at most MaxFiles files of at most
// MaxSize bytes each, the current one included, as the kubelet's
// containerLogMaxSize and containerLogMaxFiles bound a container's logs on
// disk.
type ContainerLogs struct {
	MaxSize  int64
	MaxFiles int
}

// DefaultContainerLogs are the kubelet's defaults: 10 MiB, 5 files.
var DefaultContainerLogs = ContainerLogs{MaxSize: 10 << 20, MaxFiles: 5}

// SetContainerLogs sets the rotation of the containers created from now
// on; the zero value is DefaultContainerLogs. Call it before the runtime
// is shared.
func (d *Docker) SetContainerLogs(l ContainerLogs) { d.logs = l }

// LogDriver is how the containers berth creates keep their logs.
type LogDriver struct {
	// Engine is the engine's default log driver (docker info's
	// LoggingDriver, the daemon's log-driver).
	Engine string
	// Rotated is true when berth sets Engine with its rotation
	// (ContainerLogs): Engine is json-file or local, the drivers that
	// write files on the engine's disk. Otherwise containers keep the
	// daemon's driver and log-opts, so its rotation, if any, is the
	// operator's; the engine's logs still read through its local cache
	// (dual logging).
	Rotated bool
}

// rotates lists the drivers berth rotates: both take max-size and max-file.
var rotates = map[string]bool{"json-file": true, "local": true}

// ContainerLogDriver reads the engine's default log driver, once: later
// calls, and every container created, keep the first answer (a daemon
// reconfigured since is seen when berth restarts). An error (the engine
// unreachable) is not kept: the next call reads again.
func (d *dockerContainers) ContainerLogDriver(ctx context.Context) (LogDriver, error) {
	d.logDriverMu.Lock()
	defer d.logDriverMu.Unlock()
	if d.logDriver.Engine != "" {
		return d.logDriver, nil
	}
	info, err := d.cli.Info(ctx)
	if err != nil {
		return LogDriver{}, fmt.Errorf("docker info: %w", err)
	}
	engine := info.LoggingDriver
	if engine == "" {
		engine = "json-file" // the engine's own default
	}
	d.logDriver = LogDriver{Engine: engine, Rotated: rotates[engine]}
	return d.logDriver, nil
}

// logConfig is the engine's log configuration of a container under
// driver: driver's own with l's rotation when it rotates, else none (the
// daemon's driver and options).
func (l ContainerLogs) logConfig(driver LogDriver) container.LogConfig {
	if !driver.Rotated {
		return container.LogConfig{}
	}
	if l == (ContainerLogs{}) {
		l = DefaultContainerLogs
	}
	return container.LogConfig{Type: driver.Engine, Config: map[string]string{
		"max-size": engineSize(l.MaxSize),
		"max-file": strconv.Itoa(l.MaxFiles),
	}}
}

// engineSize writes n bytes as the engine's max-size reads it (binary
// units): 10485760 as "10m".
func engineSize(n int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
