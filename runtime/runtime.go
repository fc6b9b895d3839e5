// Package runtime is berth's narrow view of a container engine: create, start,
// stop and remove containers, make sure images exist, and follow events.
// Docker implements it on the Docker Engine API; runtime/fake in memory.
package runtime

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/berth-dev/berth/model"
)

// ErrNotFound is returned (wrapped) when a container or image does not exist.
var ErrNotFound = errors.New("not found")

// ErrNameConflict is returned (wrapped) by CreateContainer when a container
// with the requested name already exists.
var ErrNameConflict = errors.New("container name already in use")

// ErrImageNotFound is returned (wrapped) by CreateContainer and ImageID when
// the image is not present locally.
var ErrImageNotFound = errors.New("image not present")

// PullPolicy mirrors the Kubernetes image pull policies.
type PullPolicy string

const (
	PullAlways       PullPolicy = "Always"
	PullIfNotPresent PullPolicy = "IfNotPresent"
	PullNever        PullPolicy = "Never"
)

// PortBinding publishes ContainerPort/Protocol on HostIP:HostPort.
type PortBinding struct {
	ContainerPort int
	Protocol      string // "tcp", "udp" or "sctp" (lower case)
	HostIP        string
	HostPort      int
}

// Mount is a bind mount of the host path Source, a named volume when Volume
// is set (Source is then the volume's name), or a private tmpfs when Tmpfs
// is set.
type Mount struct {
	Source   string
	Target   string
	ReadOnly bool
	Tmpfs    bool
	Volume   bool
	// Subpath mounts only this relative path of a volume; it must exist.
	Subpath string
	// CreateHostDir makes the engine create a missing Source directory on
	// the host (hostPath types "" and DirectoryOrCreate).
	CreateHostDir bool
	// Propagation of a bind: "" (rprivate), "rslave" or "rshared".
	Propagation string
	// RecursiveReadOnly of a read-only bind: "" (the engine's default,
	// recursive where the kernel can), "disabled" or "enabled" (fail
	// when it cannot be recursive).
	RecursiveReadOnly string
}

// VolumeInfo describes an engine volume.
type VolumeInfo struct {
	Name      string
	Labels    map[string]string
	CreatedAt time.Time
}

// ErrVolumeInUse is wrapped when a volume to remove is mounted by a
// container, running or not.
var ErrVolumeInUse = errors.New("volume is in use")

// VolumeConfig is a named engine volume, backed by a tmpfs (a Memory
// emptyDir, which lives until RemoveVolume while any container holds it
// mounted) or, when Persistent, by the engine's disk (a claim's data, kept
// until RemoveVolume).
type VolumeConfig struct {
	Name   string
	Labels map[string]string
	// Persistent makes a plain local volume on the engine's disk; the tmpfs
	// fields below are then unused.
	Persistent bool
	// SizeBytes caps the tmpfs (0: the kernel's default, half the RAM).
	SizeBytes int64
	// Mode is the root directory's permission bits (setgid included);
	// GID, when not nil, its group.
	Mode uint32
	GID  *int64
}

// ImageInfo is what berth needs to know of a local image.
type ImageInfo struct {
	ID string
	// RepoDigests are "repo@sha256:..." references of a pulled image.
	RepoDigests []string
	// User is the image's configured user ("" is root).
	User string
	// Labels are the image config's labels.
	Labels map[string]string
}

// Resources are the engine-level resource settings; zero means unset.
type Resources struct {
	CPUShares int64
	CPUQuota  int64
	CPUPeriod int64
	Memory    int64
	// MemorySwap is memory plus swap (Memory: no swap); 0 is unset.
	MemorySwap int64
}

// ContainerConfig is everything needed to create one container.
type ContainerConfig struct {
	Name       string // engine container name
	Image      string
	Entrypoint []string // nil keeps the image's
	Cmd        []string // nil keeps the image's
	Env        []string // KEY=VALUE
	WorkingDir string
	Labels     map[string]string
	Hostname   string
	Domainname string
	// NetworkMode is "container:<id>", "host", or "" for the engine default.
	NetworkMode    string
	PidMode        string // "", "host" or "container:<id>"
	IpcMode        string // "", "host", "shareable" or "container:<id>"
	Ports          []PortBinding
	Mounts         []Mount
	Resources      Resources
	Privileged     bool
	User           string
	ReadonlyRootfs bool
	CapAdd         []string
	CapDrop        []string
	// GroupAdd are supplementary groups of the process.
	GroupAdd []string
	// SecurityOpt are the engine's security options ("seccomp=unconfined",
	// "no-new-privileges:true", "apparmor=...", "label=...").
	SecurityOpt []string
	// UnmaskProc leaves /proc and /sys paths unmasked and writable
	// (procMount Unmasked).
	UnmaskProc bool
	// Sysctls, DNS, DNSSearch, DNSOptions and ExtraHosts ("name:ip") set
	// namespaces and files a sandbox shares with its containers.
	Sysctls     map[string]string
	DNS         []string
	DNSSearch   []string
	DNSOptions  []string
	ExtraHosts  []string
	OomScoreAdj int
	OpenStdin   bool
	StdinOnce   bool
	Tty         bool
	// StopSignal ("" keeps the image's) and StopTimeout are used when the
	// engine stops the container.
	StopSignal  string
	StopTimeout *int
}

// LogOptions select what Logs returns.
type LogOptions struct {
	Follow     bool
	TailLines  int // < 0: all
	Timestamps bool
}

// Event is a container lifecycle event of a managed container, as the engine
// reports it. Time is the engine's clock; events of one stream are in the
// engine's order.
type Event struct {
	ContainerID string
	Action      string // "create", "start", "die", "destroy", ...
	Time        time.Time
	// Attributes are the engine's: the container's labels plus "name" and
	// "image", and per action "exitCode" (die) or "signal" (kill).
	Attributes map[string]string
}

// Runtime is the engine interface the controller and informers use, the
// sum of the small interfaces below (as the kubelet's CRI is its
// RuntimeService and ImageService); a user needing one part takes that one.
// Implementations must be safe for concurrent use.
type Runtime interface {
	// Ping reports whether the engine answers.
	Ping(ctx context.Context) error
	ContainerManager
	ImageManager
	ImageBuilder
	VolumeManager
	Streamer
	EventSource
}

// ContainerManager is the containers' lifecycle.
type ContainerManager interface {
	// ListContainers lists every container carrying all labels in match
	// (all states) in one cheap call: a summary in store form with ID, name,
	// image, state, labels, IP and creation time, but no exit code, start or
	// finish time (inspect for those).
	ListContainers(ctx context.Context, match map[string]string) ([]*model.Container, error)
	// InspectContainer returns one container, complete; ErrNotFound if gone.
	InspectContainer(ctx context.Context, id string) (*model.Container, error)
	// CreateContainer creates (does not start) a container and returns its
	// ID; an absent image is ErrImageNotFound.
	CreateContainer(ctx context.Context, cfg *ContainerConfig) (string, error)
	StartContainer(ctx context.Context, id string) error
	// StopContainer sends SIGTERM, waits up to grace, then kills.
	StopContainer(ctx context.Context, id string, grace time.Duration) error
	// RemoveContainer force-removes a container with its anonymous volumes;
	// removing a missing container is not an error.
	RemoveContainer(ctx context.Context, id string) error
}

// ImageManager is the local images: what they are and hold, pulling and
// removing them.
type ImageManager interface {
	// InspectImage describes a local image; ErrImageNotFound when absent.
	InspectImage(ctx context.Context, image string) (ImageInfo, error)
	// ImageContent exports image (a reference or an ID) and returns what it
	// holds, bound to its ID; one over limit bytes is ErrImageTooLarge.
	ImageContent(ctx context.Context, image string, limit int64) (ImageContent, error)
	// ListImages lists the engine's top-level images, every one of them.
	ListImages(ctx context.Context) ([]Image, error)
	// RemoveImage removes image id with its references, never by force: a
	// missing one is no error, one a container or child image uses is
	// ErrImageInUse.
	RemoveImage(ctx context.Context, id string) error
	// PullImage pulls image from its registry, logging in with creds (a
	// pod's imagePullSecrets; nil: only docker.config's), calling progress (nil:
	// none) from the pulling goroutine whenever the bytes or layers done
	// change; progress must not block.
	PullImage(ctx context.Context, image string, creds *Credentials, progress func(PullProgress)) error
}

// ImageBuilder builds the single-executable images berth makes itself (its
// pause image).
type ImageBuilder interface {
	// BuildImage builds tag FROM scratch holding the static executable binary
	// (a host path) at path inside the image, with the given entrypoint.
	BuildImage(ctx context.Context, tag, binary, path string, entrypoint []string) error
	// BuildImageData is BuildImage with the executable given as its bytes.
	BuildImageData(ctx context.Context, tag string, exe []byte, path string, entrypoint []string) error
}

// VolumeManager is the engine's named volumes (Memory emptyDirs, claims).
type VolumeManager interface {
	// CreateVolume creates volume v; an existing volume of that name is
	// kept as it is.
	CreateVolume(ctx context.Context, v VolumeConfig) error
	// RemoveVolume removes a volume; a missing one is not an error, one
	// still in use is ErrVolumeInUse.
	RemoveVolume(ctx context.Context, name string) error
	// ListVolumes describes the volumes carrying all labels in match,
	// ordered by name.
	ListVolumes(ctx context.Context, match map[string]string) ([]VolumeInfo, error)
}

// Streamer is the streams into running containers: commands run in them
// and their logs.
type Streamer interface {
	// Exec runs cmd inside a running container and returns its exit code
	// and up to 10 KiB of combined output. ctx bounds the run; on expiry the
	// error wraps context.DeadlineExceeded (the process may linger).
	Exec(ctx context.Context, id string, cmd []string) (int, []byte, error)
	// ExecStream runs o.Cmd inside a running container with streamed stdio
	// (see ExecOptions) and returns its exit code once its output ended.
	// A missing container is ErrNotFound, a stopped one ErrNotRunning; on
	// ctx's end it returns ctx's error (the process may linger).
	ExecStream(ctx context.Context, id string, o ExecOptions) (int, error)
	// Logs streams the container's stdout and stderr, demultiplexed, with
	// the engine's timestamps when asked; Follow streams until ctx ends or
	// the container stops.
	Logs(ctx context.Context, id string, opts LogOptions) (io.ReadCloser, error)
}

// EventSource is the engine's stream of container events.
type EventSource interface {
	// Events streams events of containers carrying all labels in match until
	// ctx ends or the stream breaks; the error channel then yields one error.
	Events(ctx context.Context, match map[string]string) (<-chan Event, <-chan error)
}
