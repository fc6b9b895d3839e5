package runtime

import (
	"strconv"

	"github.com/docker/docker/api/types/container"
)

// ContainerLogs is the log rotation of every container berth creates
// (sandboxes included): the engine's json-file driver keeps at most
// MaxFiles files of at most MaxSize bytes each, the current one included,
// as the kubelet's containerLogMaxSize and containerLogMaxFiles bound a
// container's logs on disk.
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

// logConfig is the engine's log configuration of l: the json-file driver
// whatever the engine's default driver (berth reads containers' logs from
// the engine, which reads json-file's rotated files as one log).
func (l ContainerLogs) logConfig() container.LogConfig {
	if l == (ContainerLogs{}) {
		l = DefaultContainerLogs
	}
	return container.LogConfig{Type: "json-file", Config: map[string]string{
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
