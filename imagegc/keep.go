package imagegc

import (
	"slices"

	"github.com/berth-dev/berth/model"
)

// PodImages are the images the pods' containers (init, app and ephemeral)
// name, each once, sorted: images a desired pod needs stay even while none
// of its containers exists.
func PodImages(pods []*model.Pod) []string {
	set := map[string]bool{}
	for _, p := range pods {
		if p.Spec == nil {
			continue
		}
		s := &p.Spec.Spec
		for _, c := range s.InitContainers {
			set[c.Image] = true
		}
		for _, c := range s.Containers {
			set[c.Image] = true
		}
		for _, c := range s.EphemeralContainers {
			set[c.Image] = true
		}
	}
	delete(set, "")
	out := make([]string, 0, len(set))
	for img := range set {
		out = append(out, img)
	}
	slices.Sort(out)
	return out
}
