package server

import (
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/model"
)

// RegisterRunningPods serves GET /runningpods and /runningpods/
// (authenticated), the kubelet's list of what actually runs: a v1 PodList
// built from the engine's containers in the store, not from desired pods.
func RegisterRunningPods(s *Server) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctrs, err := s.opts.Store.Containers(nil)
		if err != nil {
			http.Error(w, "running pods: list containers: "+err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, RunningPods(ctrs))
	})
	s.Handle("GET /runningpods", h)
	s.Handle("GET /runningpods/", h)
}

// RunningPods groups the running app containers of ctrs by pod, as the
// kubelet's runtime pods: metadata name, namespace and uid, and per
// container its name and image, sorted by pod key and container name. Pods
// with only a sandbox, or nothing running, are left out; of two running
// instances of one container, the last started is listed.
func RunningPods(ctrs []*model.Container) v1.PodList {
	type pod struct {
		uid  string
		ctrs map[string]*model.Container
	}
	pods := map[string]*pod{}
	for _, c := range ctrs {
		if c.Name == model.SandboxName || c.PodKey == "" || !c.Running() {
			continue
		}
		p := pods[c.PodKey]
		if p == nil {
			p = &pod{ctrs: map[string]*model.Container{}}
			pods[c.PodKey] = p
		}
		if c.PodUID != "" {
			p.uid = c.PodUID
		}
		if old := p.ctrs[c.Name]; old == nil || c.StartedAt.After(old.StartedAt) {
			p.ctrs[c.Name] = c
		}
	}
	list := v1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Items: []v1.Pod{}}
	for _, k := range slices.Sorted(maps.Keys(pods)) {
		p := pods[k]
		ns, name, _ := strings.Cut(k, "/")
		item := v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(p.uid)}}
		for _, c := range p.ctrs {
			item.Spec.Containers = append(item.Spec.Containers, v1.Container{Name: c.Name, Image: c.Image})
		}
		sort.Slice(item.Spec.Containers, func(i, j int) bool { return item.Spec.Containers[i].Name < item.Spec.Containers[j].Name })
		list.Items = append(list.Items, item)
	}
	return list
}
