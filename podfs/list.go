package podfs

import (
	"os"
	"path/filepath"
	"sort"
)

// PodUIDs lists the pod directories: the direct children of root_dir/pods
// that are directories themselves (a symlink is not, and is never
// followed) and named by a valid pod UID. Every other entry is returned in
// other, to be reported and left alone. Both are sorted.
func (r Root) PodUIDs() (uids, other []string, err error) {
	ents, err := os.ReadDir(filepath.Join(r.dir, podsDir))
	if err != nil {
		return nil, nil, err
	}
	for _, e := range ents {
		if e.Type().IsDir() && checkUID(e.Name()) == nil {
			uids = append(uids, e.Name())
		} else {
			other = append(other, e.Name())
		}
	}
	sort.Strings(uids)
	sort.Strings(other)
	return uids, other, nil
}
