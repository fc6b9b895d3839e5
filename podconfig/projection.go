package podconfig

import (
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/podfs"
)

// IsProjected reports whether v's files are written by berth from
// ConfigMaps, Secrets or the pod itself: configMap, secret, downwardAPI
// and projected volumes.
func IsProjected(v *v1.Volume) bool {
	return v.ConfigMap != nil || v.Secret != nil || v.DownwardAPI != nil || v.Projected != nil
}

// HasProjected reports whether pod has a volume IsProjected.
func HasProjected(pod *v1.Pod) bool {
	for i := range pod.Spec.Volumes {
		if IsProjected(&pod.Spec.Volumes[i]) {
			return true
		}
	}
	return false
}

// onTmpfs reports whether the kubelet backs v by memory: secret and
// projected volumes (which may hold Secrets); configMap and downwardAPI
// volumes are on disk.
func onTmpfs(v *v1.Volume) bool { return v.Secret != nil || v.Projected != nil }

// defaultFileMode is the kubelet's default mode of projected files.
const defaultFileMode = v1.ConfigMapVolumeSourceDefaultMode

// Limits of one projected volume. An API server bounds an object to 1 MiB
// but not how often a volume's items repeat its keys; berth, which writes
// the files as root (Secrets into memory), bounds what one volume may ask
// for, before any of it is built.
const (
	MaxProjectedFiles = 4096
	MaxProjectedBytes = 16 << 20
	// MaxPodProjectedBytes bounds the projected volumes of one pod together.
	MaxPodProjectedBytes = 64 << 20
)

// payload is the files of one projected volume being built, within the
// limits.
type payload struct {
	volume string
	files  map[string]podfs.File
	bytes  int64
}

// room refuses the next file of n bytes when it would pass a limit.
func (pl *payload) room(n int) error {
	switch {
	case len(pl.files) >= MaxProjectedFiles:
		return fmt.Errorf("projected volume %q: more than %d files", pl.volume, MaxProjectedFiles)
	case pl.bytes+int64(n) > MaxProjectedBytes:
		return fmt.Errorf("projected volume %q: more than %d MiB of files", pl.volume, MaxProjectedBytes>>20)
	}
	return nil
}

func (pl *payload) add(path string, data []byte, mode os.FileMode) error {
	if err := pl.room(len(data)); err != nil {
		return err
	}
	if old, ok := pl.files[path]; ok {
		pl.bytes -= int64(len(old.Data))
	}
	pl.files[path] = podfs.File{Data: data, Mode: mode}
	pl.bytes += int64(len(data))
	return nil
}

// Projection computes what projected volume v of p must hold now, from
// objs and the pod's own fields, as the kubelet's configMap, secret,
// downwardAPI and projected volume plugins do. A missing non-optional
// object or key is a *MissingError; an optional missing object projects
// nothing.
func (b *Builder) Projection(pod *v1.Pod, v *v1.Volume, objs Objects, now time.Time) (podfs.Projection, error) {
	p := podfs.Projection{UID: string(pod.UID), Volume: v.Name, Files: map[string]podfs.File{}, Now: now, GID: fsGroup(pod)}
	if onTmpfs(v) {
		// Room for the old and the new files at the swap, within the
		// pod's memory.
		p.Tmpfs, p.SizeBytes = true, min(b.tmpfsSize(pod), 2*MaxProjectedBytes+1<<20)
	}
	pl := &payload{volume: v.Name, files: p.Files}
	var err error
	switch {
	case v.ConfigMap != nil:
		s := v.ConfigMap
		err = projectObject(pl, pod, "configmap", s.Name, s.Items, s.Optional, s.DefaultMode, objs)
	case v.Secret != nil:
		s := v.Secret
		err = projectObject(pl, pod, "secret", s.SecretName, s.Items, s.Optional, s.DefaultMode, objs)
	case v.DownwardAPI != nil:
		err = b.projectDownward(pl, pod, v.DownwardAPI.Items, v.DownwardAPI.DefaultMode)
	case v.Projected != nil:
		for _, src := range v.Projected.Sources {
			mode := v.Projected.DefaultMode
			switch {
			case src.ConfigMap != nil:
				err = projectObject(pl, pod, "configmap", src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, mode, objs)
			case src.Secret != nil:
				err = projectObject(pl, pod, "secret", src.Secret.Name, src.Secret.Items, src.Secret.Optional, mode, objs)
			case src.DownwardAPI != nil:
				err = b.projectDownward(pl, pod, src.DownwardAPI.Items, mode)
			default:
				err = fmt.Errorf("projected volume %q: source not supported by berth", v.Name)
			}
			if err != nil {
				return p, err
			}
		}
	default:
		return p, fmt.Errorf("volume %q is not a projected volume", v.Name)
	}
	return p, err
}

// fileMode is mode (an item's or the volume's default), else 0644.
func fileMode(modes ...*int32) os.FileMode {
	for _, m := range modes {
		if m != nil {
			return os.FileMode(*m) & os.ModePerm
		}
	}
	return os.FileMode(defaultFileMode)
}

// projectObject adds the files of one ConfigMap or Secret: every key (data
// and binaryData) as a file of its name, or only items, each at its path.
// A missing item key fails unless the reference is optional.
func projectObject(pl *payload, pod *v1.Pod, kind, name string, items []v1.KeyToPath, optional *bool, defaultMode *int32, objs Objects) error {
	opt := optional != nil && *optional
	obj, err := lookup(objs, pod.Namespace, kind, name, opt)
	if err != nil || obj == nil {
		return err
	}
	if len(items) == 0 {
		for _, k := range slices.Sorted(maps.Keys(obj.data)) {
			if err := pl.add(k, obj.data[k], fileMode(defaultMode)); err != nil {
				return err
			}
		}
		return nil
	}
	for _, it := range items {
		v, err := obj.key(it.Key)
		if err != nil {
			if opt {
				continue
			}
			return err
		}
		if err := pl.add(path.Clean(it.Path), v, fileMode(it.Mode, defaultMode)); err != nil {
			return err
		}
	}
	return nil
}

// projectDownward adds downwardAPI files: metadata fields (labels and
// annotations as the kubelet formats them: sorted k="v" lines) and
// resource values of a named container.
func (b *Builder) projectDownward(pl *payload, pod *v1.Pod, items []v1.DownwardAPIVolumeFile, defaultMode *int32) error {
	for _, it := range items {
		if err := pl.room(0); err != nil {
			return err
		}
		var val string
		switch {
		case it.FieldRef != nil:
			switch fp := it.FieldRef.FieldPath; fp {
			case "metadata.labels":
				val = formatMap(pod.Labels)
			case "metadata.annotations":
				val = formatMap(pod.Annotations)
			default:
				v, err := b.env.fieldRefValue(pod, fp, PodIPs{})
				if err != nil {
					return fmt.Errorf("downwardAPI %s: %w", it.Path, err)
				}
				val = v
			}
		case it.ResourceFieldRef != nil:
			v, err := b.env.resourceFieldValue(pod, &v1.Container{}, it.ResourceFieldRef)
			if err != nil {
				return fmt.Errorf("downwardAPI %s: %w", it.Path, err)
			}
			val = v
		default:
			continue
		}
		if err := pl.add(path.Clean(it.Path), []byte(val), fileMode(it.Mode, defaultMode)); err != nil {
			return err
		}
	}
	return nil
}

// formatMap is the kubelet's fieldpath.FormatMap: k="v" lines, sorted,
// values quoted as Go strings.
func formatMap(m map[string]string) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(k + "=" + strconv.Quote(m[k]))
	}
	return b.String()
}

// tmpfsSize caps a Secret or projected volume's tmpfs as a Memory emptyDir
// without a sizeLimit: the pod's memory limit, else the node's memory.
func (b *Builder) tmpfsSize(pod *v1.Pod) int64 {
	return b.memoryVolumeSize(pod, &v1.Volume{VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
}
