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

// Projection computes what projected volume v of p must hold now, from
// objs and the pod's own fields, as the kubelet's configMap, secret,
// downwardAPI and projected volume plugins do. A missing non-optional
// object or key is a *MissingError; an optional missing object projects
// nothing.
func (b *Builder) Projection(pod *v1.Pod, v *v1.Volume, objs Objects, now time.Time) (podfs.Projection, error) {
	p := podfs.Projection{UID: string(pod.UID), Volume: v.Name, Files: map[string]podfs.File{}, Now: now, GID: fsGroup(pod)}
	if onTmpfs(v) {
		p.Tmpfs, p.SizeBytes = true, b.tmpfsSize(pod)
	}
	var err error
	switch {
	case v.ConfigMap != nil:
		s := v.ConfigMap
		err = projectObject(p.Files, pod, "configmap", s.Name, s.Items, s.Optional, s.DefaultMode, objs)
	case v.Secret != nil:
		s := v.Secret
		err = projectObject(p.Files, pod, "secret", s.SecretName, s.Items, s.Optional, s.DefaultMode, objs)
	case v.DownwardAPI != nil:
		err = b.projectDownward(p.Files, pod, v.DownwardAPI.Items, v.DownwardAPI.DefaultMode)
	case v.Projected != nil:
		for _, src := range v.Projected.Sources {
			mode := v.Projected.DefaultMode
			switch {
			case src.ConfigMap != nil:
				err = projectObject(p.Files, pod, "configmap", src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, mode, objs)
			case src.Secret != nil:
				err = projectObject(p.Files, pod, "secret", src.Secret.Name, src.Secret.Items, src.Secret.Optional, mode, objs)
			case src.DownwardAPI != nil:
				err = b.projectDownward(p.Files, pod, src.DownwardAPI.Items, mode)
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
func projectObject(files map[string]podfs.File, pod *v1.Pod, kind, name string, items []v1.KeyToPath, optional *bool, defaultMode *int32, objs Objects) error {
	opt := optional != nil && *optional
	obj, err := lookup(objs, pod.Namespace, kind, name, opt)
	if err != nil || obj == nil {
		return err
	}
	if len(items) == 0 {
		for _, k := range slices.Sorted(maps.Keys(obj.data)) {
			files[k] = podfs.File{Data: obj.data[k], Mode: fileMode(defaultMode)}
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
		files[path.Clean(it.Path)] = podfs.File{Data: v, Mode: fileMode(it.Mode, defaultMode)}
	}
	return nil
}

// projectDownward adds downwardAPI files: metadata fields (labels and
// annotations as the kubelet formats them: sorted k="v" lines) and
// resource values of a named container.
func (b *Builder) projectDownward(files map[string]podfs.File, pod *v1.Pod, items []v1.DownwardAPIVolumeFile, defaultMode *int32) error {
	for _, it := range items {
		var val string
		switch {
		case it.FieldRef != nil:
			switch fp := it.FieldRef.FieldPath; fp {
			case "metadata.labels":
				val = formatMap(pod.Labels)
			case "metadata.annotations":
				val = formatMap(pod.Annotations)
			default:
				v, err := b.fieldRefValue(pod, fp, PodIPs{})
				if err != nil {
					return fmt.Errorf("downwardAPI %s: %w", it.Path, err)
				}
				val = v
			}
		case it.ResourceFieldRef != nil:
			v, err := b.resourceFieldValue(pod, &v1.Container{}, it.ResourceFieldRef)
			if err != nil {
				return fmt.Errorf("downwardAPI %s: %w", it.Path, err)
			}
			val = v
		default:
			continue
		}
		files[path.Clean(it.Path)] = podfs.File{Data: []byte(val), Mode: fileMode(it.Mode, defaultMode)}
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
