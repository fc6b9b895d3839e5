// Package podconfig translates a pod into what the engine is asked for: the
// configs of its sandbox and containers (with berth's labels), and the
// volumes and files they need. It knows no store and no plan; what it makes
// on the filesystem goes through Paths, and what it asks of the engine
// through a VolumeCreator passed in.
package podconfig

import (
	"io/fs"
	"os"

	"github.com/berth-dev/berth/podfs"
)

// Config is what translation reads besides the pod.
type Config struct {
	// Node is the node's name: spec.nodeName and the node label.
	Node     string
	NodeInfo NodeInfo
	// RootDir is root_dir: Localhost seccomp profiles are read from its
	// seccomp directory, and its filesystem is the node's ephemeral storage.
	RootDir string
}

// NodeInfo describes the host berth runs on.
type NodeInfo struct {
	// IP is the node's address: status.hostIP, and podIP of hostNetwork
	// pods.
	IP string
	// CPUMilli and Memory (bytes) are the node's capacity, which the
	// downward API reports for a container without the matching limit.
	CPUMilli int64
	Memory   int64
	// NoNegativeOOMScores is set where the host denies lowering OOM scores
	// (no CAP_SYS_RESOURCE): negative adjustments are then raised to 0
	// instead of failing every container start.
	NoNegativeOOMScores bool
}

// Paths is the filesystem work of translation under root_dir: emptyDir
// directories, subPath binds, termination-log files, seccomp profiles and
// the ephemeral-storage capacity. podfs.Root is the implementation; every
// host path made from a manifest name must come from it, never from
// joining that name onto a path.
type Paths interface {
	VolumeDir(uid, volume string) (string, error)
	// MakeVolumeDir creates the directory and calls own on it, opened.
	MakeVolumeDir(uid, volume string, own func(dir *os.File) error) (string, error)
	BindSubPath(s podfs.SubPath) (string, error)
	TerminationLog(uid, container string, attempt int) (string, error)
	MakeTerminationLog(uid, container string, attempt int) (string, error)
	// WriteProjection writes a configMap, secret, downwardAPI or projected
	// volume atomically into its ProjectedDir; ProjectionDataDir is its
	// current data directory, where a subPath of it is bound from.
	WriteProjection(p podfs.Projection) (bool, error)
	ProjectedDir(uid, volume string) (string, error)
	ProjectionDataDir(uid, volume string) (string, error)
	// ReadVolumeFile reads a file a container wrote in a disk emptyDir
	// (an env file), confined to the volume.
	ReadVolumeFile(uid, volume, rel string) ([]byte, error)
	// SeccompProfile reads a Localhost profile, confined to the seccomp root.
	SeccompProfile(name string) ([]byte, error)
	// Capacity is the size in bytes of root_dir's filesystem.
	Capacity() (int64, error)
}

// Host is the node's filesystem outside root_dir: the files berth's
// configuration names and the hostPath volumes of privileged sources.
// podfs.Host is the implementation. Nothing here may receive a path built
// from a manifest name (a hostPath volume's path is a host path by design).
type Host interface {
	ReadFile(path string) ([]byte, error)
	Stat(path string) (fs.FileInfo, error)
	MkdirAll(path string) error
	// CreateFile makes an empty file and its parents; an existing file is
	// left as it is.
	CreateFile(path string) error
}

// Builder translates pods under one Config. It holds no state of its own:
// safe for concurrent use.
type Builder struct {
	cfg   Config
	paths Paths
	host  Host
	env   envResolver
}

// New returns a Builder making its files through paths (under root_dir)
// and host (outside it).
func New(cfg Config, paths Paths, host Host) *Builder {
	return &Builder{cfg: cfg, paths: paths, host: host, env: envResolver{cfg: cfg, paths: paths}}
}
