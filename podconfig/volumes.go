package podconfig

import (
	"context"
	"fmt"
	"io/fs"
	"os"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podfs"
	"github.com/berth-dev/berth/runtime"
)

// sandboxVolumeDir is where the sandbox holds a Memory emptyDir mounted, so
// the engine keeps its tmpfs while the pod lives.
const sandboxVolumeDir = "/berth-volumes/"

// memoryVolumeName is the engine volume backing a Memory emptyDir: one per
// pod volume, shared by all the pod's containers.
func memoryVolumeName(podUID, volume string) string {
	return "berth-" + podUID + "-" + volume
}

// IsMemoryEmptyDir reports whether v is an emptyDir of medium Memory: an
// engine tmpfs volume, not a directory under root_dir.
func IsMemoryEmptyDir(v *v1.Volume) bool {
	return v.EmptyDir != nil && v.EmptyDir.Medium == v1.StorageMediumMemory
}

func fsGroup(pod *v1.Pod) *int64 {
	if sc := pod.Spec.SecurityContext; sc != nil {
		return sc.FSGroup
	}
	return nil
}

// emptyDirBits are the permission bits of emptyDir v as the kubelet sets
// them: its mode (0777 when unset), and with an fsGroup the group rwx and
// setgid that the kubelet's volume ownership adds.
func emptyDirBits(pod *v1.Pod, v *v1.Volume) uint32 {
	bits := uint32(0o777)
	if v.EmptyDir != nil && v.EmptyDir.Mode != nil {
		bits = uint32(*v.EmptyDir.Mode) & 0o1777
	}
	if fsGroup(pod) != nil {
		bits |= 0o2770
	}
	return bits
}

// emptyDirMode is emptyDirBits as a FileMode.
func emptyDirMode(pod *v1.Pod, v *v1.Volume) os.FileMode {
	bits := emptyDirBits(pod, v)
	mode := os.FileMode(bits & 0o777)
	if bits&0o1000 != 0 {
		mode |= os.ModeSticky
	}
	if bits&0o2000 != 0 {
		mode |= os.ModeSetgid
	}
	return mode
}

// memoryVolumeSize is the tmpfs size of a Memory emptyDir as the kubelet
// sizes it: the smallest of sizeLimit, the pod's memory limit (when every
// container has one) and the node's memory; 0 when none is known.
func (b *Builder) memoryVolumeSize(pod *v1.Pod, v *v1.Volume) int64 {
	size := b.cfg.NodeInfo.Memory
	smaller := func(n int64) {
		if n > 0 && (size == 0 || n < size) {
			size = n
		}
	}
	if v.EmptyDir.SizeLimit != nil {
		smaller(v.EmptyDir.SizeLimit.Value())
	}
	var sum, initMax int64
	limited := true
	for i, list := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, ctr := range list {
			q, ok := ctr.Resources.Limits[v1.ResourceMemory]
			if !ok || q.IsZero() {
				limited = false
			}
			if i == 0 {
				sum += q.Value()
			} else {
				initMax = max(initMax, q.Value())
			}
		}
	}
	if limited {
		smaller(max(sum, initMax))
	}
	return size
}

// VolumeCreator is the engine's part in EnsureVolumes (runtime.Runtime).
type VolumeCreator interface {
	CreateVolume(ctx context.Context, v runtime.VolumeConfig) error
}

// EnsureVolumes makes the pod's emptyDirs: disk ones as directories with
// the kubelet's mode and fsGroup ownership, and, when newSandbox is set,
// Memory ones as engine tmpfs volumes (a running sandbox holds them, so
// only a sandbox about to be created needs them made); it is idempotent.
func (b *Builder) EnsureVolumes(ctx context.Context, engine VolumeCreator, p *model.Pod, newSandbox bool) error {
	pod := p.Spec
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		switch {
		case IsMemoryEmptyDir(v) && !newSandbox:
			// Held by the running sandbox.
		case IsMemoryEmptyDir(v):
			if err := engine.CreateVolume(ctx, b.memoryVolume(pod, v)); err != nil {
				return fmt.Errorf("emptyDir %s: %w", v.Name, err)
			}
		case v.EmptyDir != nil:
			if _, err := b.paths.MakeVolumeDir(string(pod.UID), v.Name, func(dir *os.File) error { return ownOpen(dir, pod, v) }); err != nil {
				return fmt.Errorf("emptyDir %s: %w", v.Name, err)
			}
		}
	}
	return nil
}

// memoryVolume is the engine volume of Memory emptyDir v.
func (b *Builder) memoryVolume(pod *v1.Pod, v *v1.Volume) runtime.VolumeConfig {
	return runtime.VolumeConfig{
		Name:      memoryVolumeName(string(pod.UID), v.Name),
		Labels:    runtime.VolumeLabels(pod.Namespace, pod.Name, string(pod.UID), b.cfg.Node),
		SizeBytes: b.memoryVolumeSize(pod, v),
		Mode:      emptyDirBits(pod, v),
		GID:       fsGroup(pod),
	}
}

// ownOpen gives an open directory the mode of emptyDir v (umask aside) and
// the fsGroup: the emptyDir itself, or one a subPath made inside it, where a
// path could be swapped for a symlink.
func ownOpen(dir *os.File, pod *v1.Pod, v *v1.Volume) error {
	if g := fsGroup(pod); g != nil {
		if err := dir.Chown(-1, int(*g)); err != nil {
			return err
		}
	}
	return dir.Chmod(emptyDirMode(pod, v))
}

// sandboxMounts hold the pod's Memory emptyDirs mounted for its lifetime.
func sandboxMounts(pod *v1.Pod) []runtime.Mount {
	var ms []runtime.Mount
	for i := range pod.Spec.Volumes {
		if v := &pod.Spec.Volumes[i]; IsMemoryEmptyDir(v) {
			ms = append(ms, runtime.Mount{Volume: true, Source: memoryVolumeName(string(pod.UID), v.Name), Target: sandboxVolumeDir + v.Name})
		}
	}
	return ms
}

// mount maps volumeMount index of container ctrName; subPath is the
// mount's subPath, or its subPathExpr already expanded. A subPath of a
// hostPath or disk emptyDir is bound under the pod's directory
// (podfs.BindSubPath) and the engine gets that bind; a Memory emptyDir's
// is the engine volume's Subpath, which the engine resolves itself.
func (b *Builder) mount(pod *v1.Pod, source, ctrName string, index int, m v1.VolumeMount, subPath string) (runtime.Mount, error) {
	var vol *v1.Volume
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == m.Name {
			vol = &pod.Spec.Volumes[i]
		}
	}
	if vol == nil {
		return runtime.Mount{}, fmt.Errorf("volumeMount %q: no such volume", m.Name)
	}
	out := runtime.Mount{Target: m.MountPath, ReadOnly: m.ReadOnly}
	if mp := m.MountPropagation; mp != nil {
		switch *mp {
		case v1.MountPropagationHostToContainer:
			out.Propagation = "rslave"
		case v1.MountPropagationBidirectional:
			out.Propagation = "rshared"
		}
	}
	if rro := m.RecursiveReadOnly; rro != nil && m.ReadOnly {
		switch *rro {
		case v1.RecursiveReadOnlyDisabled:
			out.RecursiveReadOnly = "disabled"
		case v1.RecursiveReadOnlyEnabled:
			out.RecursiveReadOnly = "enabled"
		}
	}
	switch {
	case vol.HostPath != nil:
		t := v1.HostPathUnset
		if vol.HostPath.Type != nil {
			t = *vol.HostPath.Type
		}
		creates := t == v1.HostPathUnset || t == v1.HostPathDirectoryOrCreate
		if subPath != "" {
			// The sub-path is made and checked on berth's view of the host.
			if creates {
				if err := b.host.MkdirAll(vol.HostPath.Path); err != nil {
					return runtime.Mount{}, fmt.Errorf("volume %q: %w", vol.Name, err)
				}
			} else if err := b.prepareHostPath(vol.HostPath); err != nil {
				return runtime.Mount{}, fmt.Errorf("volume %q: %w", vol.Name, err)
			}
			src, err := b.paths.BindSubPath(podfs.SubPath{UID: string(pod.UID), Volume: vol.Name, Container: ctrName, Index: index,
				VolumePath: vol.HostPath.Path, Path: subPath, Mode: 0o755})
			if err != nil {
				return runtime.Mount{}, fmt.Errorf("volume %q: %w", vol.Name, err)
			}
			out.Source = src
			return out, nil
		}
		out.Source = vol.HostPath.Path
		if creates {
			// The engine creates the directory on the host, which also
			// works when berth itself runs in a container.
			out.CreateHostDir = true
			return out, nil
		}
		if err := b.prepareHostPath(vol.HostPath); err != nil {
			return runtime.Mount{}, fmt.Errorf("volume %q: %w", vol.Name, err)
		}
		return out, nil
	case IsProjected(vol):
		// Read-only whatever the mount says, as the kubelet since
		// CVE-2017-1002102: the files are berth's to swap.
		out.ReadOnly = true
		uid := string(pod.UID)
		if subPath == "" {
			dir, err := b.paths.ProjectedDir(uid, vol.Name)
			if err != nil {
				return runtime.Mount{}, fmt.Errorf("volume %q: %w", vol.Name, err)
			}
			out.Source = dir
			return out, nil
		}
		data, err := b.paths.ProjectionDataDir(uid, vol.Name)
		if err != nil {
			return runtime.Mount{}, fmt.Errorf("volume %q: %w", vol.Name, err)
		}
		src, err := b.paths.BindSubPath(podfs.SubPath{UID: uid, Volume: vol.Name, Container: ctrName, Index: index,
			VolumePath: data, Path: subPath, NoCreate: true})
		if err != nil {
			return runtime.Mount{}, fmt.Errorf("volume %q: %w", vol.Name, err)
		}
		out.Source = src
		return out, nil
	case IsMemoryEmptyDir(vol):
		out.Volume = true
		out.Source = memoryVolumeName(string(pod.UID), vol.Name)
		out.Subpath = subPath
		return out, nil
	case vol.PersistentVolumeClaim != nil:
		// Made by EnsureClaims; readOnly on either side holds.
		out.Volume = true
		out.Source = b.ClaimVolume(source, pod.Namespace, vol.PersistentVolumeClaim.ClaimName)
		out.ReadOnly = m.ReadOnly || vol.PersistentVolumeClaim.ReadOnly
		out.Subpath = subPath
		return out, nil
	case vol.EmptyDir != nil:
		base, err := b.emptyDirPath(pod, vol.Name)
		if err != nil {
			return runtime.Mount{}, fmt.Errorf("volume %q: %w", vol.Name, err)
		}
		out.Source = base
		if subPath != "" {
			src, err := b.paths.BindSubPath(podfs.SubPath{UID: string(pod.UID), Volume: vol.Name, Container: ctrName, Index: index,
				VolumePath: base, Path: subPath, Mode: emptyDirMode(pod, vol), Own: func(dir *os.File) error { return ownOpen(dir, pod, vol) }})
			if err != nil {
				return runtime.Mount{}, fmt.Errorf("volume %q: %w", vol.Name, err)
			}
			out.Source = src
		}
		return out, nil
	}
	return runtime.Mount{}, fmt.Errorf("volume %q: unsupported volume type", vol.Name)
}

// emptyDirPath is the directory of the pod's disk emptyDir volume.
func (b *Builder) emptyDirPath(pod *v1.Pod, volume string) (string, error) {
	return b.paths.VolumeDir(string(pod.UID), volume)
}

// prepareHostPath enforces the typed hostPath checks as the kubelet does, on
// berth's view of the filesystem (when berth runs in a container, mount the
// paths typed pods use at the same place).
func (b *Builder) prepareHostPath(hp *v1.HostPathVolumeSource) error {
	t := v1.HostPathUnset
	if hp.Type != nil {
		t = *hp.Type
	}
	fi, err := b.host.Stat(hp.Path)
	exists := err == nil
	switch t {
	case v1.HostPathFileOrCreate:
		if !exists {
			return b.host.CreateFile(hp.Path)
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
		if !exists || fi.Mode()&fs.ModeSocket == 0 {
			return fmt.Errorf("hostPath type check failed: %s is not a socket", hp.Path)
		}
	case v1.HostPathCharDev:
		if !exists || fi.Mode()&fs.ModeCharDevice == 0 {
			return fmt.Errorf("hostPath type check failed: %s is not a character device", hp.Path)
		}
	case v1.HostPathBlockDev:
		if !exists || fi.Mode()&fs.ModeDevice == 0 || fi.Mode()&fs.ModeCharDevice != 0 {
			return fmt.Errorf("hostPath type check failed: %s is not a block device", hp.Path)
		}
	}
	return nil
}
