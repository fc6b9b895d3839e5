package controller

import (
	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podconfig"
	"github.com/berth-dev/berth/podfs"
	"github.com/berth-dev/berth/store"
)

// objectsOf are the objects pod p may use.
func objectsOf(st *store.Store, p *model.Pod) podconfig.Objects {
	return sourceObjects{store: st, source: p.Source}
}

// syncProjections writes every projected volume of p whose payload changed
// since it was last written (projected.Writer.Sync), and returns the
// volumes that cannot be written now with the reason.
func (c *Controller) syncProjections(p *model.Pod) podconfig.VolumeErrors {
	pod := p.Spec
	var vols []*v1.Volume
	for i := range pod.Spec.Volumes {
		if podconfig.IsProjected(&pod.Spec.Volumes[i]) {
			vols = append(vols, &pod.Spec.Volumes[i])
		}
	}
	if len(vols) == 0 {
		return nil
	}
	objs := objectsOf(c.store, p)
	return c.projected.Sync(p.Key, string(pod.UID), vols, func(v *v1.Volume) (podfs.Projection, error) {
		return c.podconfig.Projection(pod, v, objs, c.cfg.Clock.Now())
	})
}

// volumeError is the error of the first volume ctr mounts that could not
// be written, or nil.
func volumeError(ctr *v1.Container, failed podconfig.VolumeErrors) (string, error) {
	for _, m := range ctr.VolumeMounts {
		if err := failed[m.Name]; err != nil {
			return m.Name, err
		}
	}
	return "", nil
}

// uidInUse reports whether any desired pod or any container, of any key,
// has uid: a pod renamed with its metadata.uid keeps its directory.
func uidInUse(st *store.Store, uid string) bool {
	if uidDesired(st, uid) {
		return true
	}
	ctrs, _ := st.Containers(nil)
	for _, ct := range ctrs {
		if ct.PodUID == uid {
			return true
		}
	}
	return false
}

// uidDesired reports whether a desired pod, of any key, has uid.
func uidDesired(st *store.Store, uid string) bool {
	pods, _ := st.Pods(nil)
	for _, p := range pods {
		if string(p.Spec.UID) == uid {
			return true
		}
	}
	return false
}
