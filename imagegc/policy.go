// Package imagegc removes the engine's unused images when the disk holding
// them fills, as the kubelet's image garbage collection does: at or above
// the high threshold, images no container uses are removed, least recently
// used first, until usage is back at the low threshold. policy.go is the
// pure decision; collector.go runs it against the engine.
package imagegc

import (
	"sort"
	"time"
)

// Period is how often the collector runs, the kubelet's ImageGCPeriod.
const Period = 5 * time.Minute

// MinAge is how long an image must have been known to this collector
// before it may go, the kubelet's imageMinimumGCAge default: an image
// pulled a moment ago is not yet used by the container it was pulled for.
const MinAge = 2 * time.Minute

// Policy is when and how much to collect.
type Policy struct {
	// HighThresholdPercent of disk usage starts a collection; 100 never
	// does. LowThresholdPercent is where it stops; below the high one.
	HighThresholdPercent, LowThresholdPercent int
	// MinAge is the least time since an image was first seen before it may
	// be removed.
	MinAge time.Duration
}

// Usage is the state of the filesystem holding the engine's images, in
// bytes; Available is what an unprivileged writer may still use (statfs's
// f_bavail, as the kubelet's cAdvisor reports it).
type Usage struct {
	Capacity, Available int64
}

// Percent is the used share of the disk in whole percent, rounded up as
// the kubelet's (100 - available*100/capacity).
func (u Usage) Percent() int {
	if u.Capacity <= 0 {
		return 0
	}
	return 100 - int(u.Available*100/u.Capacity)
}

// Record is one local image as the policy sees it.
type Record struct {
	ID      string
	Size    int64
	Created time.Time
	// FirstSeen is when this collector first listed the image.
	FirstSeen time.Time
	// LastUsed is when a container last used it, as this collector saw;
	// zero when it never did.
	LastUsed time.Time
}

// age is the time the policy orders by: last use, else creation.
func (r Record) age() time.Time {
	if !r.LastUsed.IsZero() {
		return r.LastUsed
	}
	return r.Created
}

// Plan is what one collection should remove.
type Plan struct {
	// BytesToFree brings usage down to the low threshold; 0 when the
	// disk is below the high one.
	BytesToFree int64
	// Candidates are every image that may go, in removal order: least
	// recently used (else oldest created) first, then by ID. The
	// collector removes them in turn until BytesToFree are freed, so an
	// image whose removal fails is replaced by the next.
	Candidates []Record
}

// Remove is the prefix of Candidates whose sizes first reach BytesToFree
// (all of them when they do not): what a collection removes when every
// removal succeeds.
func (p Plan) Remove() []Record {
	var freed int64
	for i, r := range p.Candidates {
		if freed >= p.BytesToFree {
			return p.Candidates[:i]
		}
		freed += r.Size
	}
	return p.Candidates
}

// Due reports whether usage u calls for a collection: at or above the
// high threshold, unless that is 100 (off).
func (p Policy) Due(u Usage) bool {
	return p.HighThresholdPercent < 100 && u.Capacity > 0 && u.Percent() >= p.HighThresholdPercent
}

// Plan decides a collection: nothing while usage is below the high
// threshold (or the threshold is 100, off); else the images not in inUse
// (IDs of images a container uses, a desired pod needs, or the pause image)
// known for at least MinAge at now, in removal order, and the bytes to
// free. It is pure.
func (p Policy) Plan(u Usage, images []Record, inUse map[string]bool, now time.Time) Plan {
	if !p.Due(u) {
		return Plan{}
	}
	toFree := u.Capacity*int64(100-p.LowThresholdPercent)/100 - u.Available
	if toFree <= 0 {
		return Plan{}
	}
	var cands []Record
	for _, r := range images {
		if inUse[r.ID] || now.Sub(r.FirstSeen) < p.MinAge {
			continue
		}
		cands = append(cands, r)
	}
	sort.Slice(cands, func(i, j int) bool {
		if a, b := cands[i].age(), cands[j].age(); !a.Equal(b) {
			return a.Before(b)
		}
		return cands[i].ID < cands[j].ID
	})
	return Plan{BytesToFree: toFree, Candidates: cands}
}
