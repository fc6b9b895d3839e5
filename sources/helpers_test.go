package sources

import (
	"fmt"
	"slices"
)

func podManifest(name, image string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  containers:\n  - name: c\n    image: %s\n", name, image)
}

func podNames(u Update) []string {
	var names []string
	for _, d := range u.Pods {
		names = append(names, d.Pod.Name)
	}
	slices.Sort(names)
	return names
}

func hasPods(names ...string) func(Update) bool {
	return func(u Update) bool {
		got := podNames(u)
		return slices.Equal(got, names) || (len(got) == 0 && len(names) == 0)
	}
}
