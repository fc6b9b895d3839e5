package server

import (
	"github.com/berth-dev/berth/kubeapi/stream"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

// podIncarnation returns the containers of pod key that the server's
// streams (logs, exec) may reach: while a source declares the pod, those
// of that pod itself (its UID and source), never those a removed pod of
// the same name still stops; with none declared, those of the incarnation
// that created a container last. pod is the declared pod, nil if none.
func podIncarnation(st *store.Store, key string) (ctrs []*model.Container, pod *model.Pod, err error) {
	all, err := st.ContainersByPod(nil, key)
	if err != nil {
		return nil, nil, err
	}
	if pod, err = st.Pod(nil, key); err != nil {
		return nil, nil, err
	}
	if pod != nil && pod.Spec != nil {
		return stream.IncarnationOf(all, pod), pod, nil
	}
	var newest *model.Container
	for _, c := range all {
		if newest == nil || c.CreatedAt.After(newest.CreatedAt) {
			newest = c
		}
	}
	for _, c := range all {
		if c.PodUID == newest.PodUID && c.Source == newest.Source {
			ctrs = append(ctrs, c)
		}
	}
	return ctrs, nil, nil
}
