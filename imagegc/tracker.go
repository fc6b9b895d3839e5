package imagegc

import (
	"time"

	"github.com/berth-dev/berth/runtime"
)

// tracker is what the collector remembers of each image between passes,
// as the kubelet's image records: when it was first listed and when a
// container was last seen using it. It lives in memory, so after a
// restart every image is new again (the kubelet's too).
type tracker struct {
	recs map[string]*Record
}

// observe records the images listed at now, those in used (IDs a container
// uses) as used at now, forgets images that are gone and returns the
// records of the listed ones.
func (t *tracker) observe(images []runtime.Image, used map[string]bool, now time.Time) []Record {
	if t.recs == nil {
		t.recs = map[string]*Record{}
	}
	listed := make(map[string]bool, len(images))
	out := make([]Record, 0, len(images))
	for _, im := range images {
		listed[im.ID] = true
		r := t.recs[im.ID]
		if r == nil {
			r = &Record{ID: im.ID, FirstSeen: now}
			t.recs[im.ID] = r
		}
		r.Size, r.Created = im.Size, im.Created
		if used[im.ID] {
			r.LastUsed = now
		}
		out = append(out, *r)
	}
	for id := range t.recs {
		if !listed[id] {
			delete(t.recs, id)
		}
	}
	return out
}
