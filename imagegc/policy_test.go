package imagegc

import (
	"slices"
	"testing"
	"time"
)

func ids(rs []Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// usageAt is a 1000-byte disk with used bytes in use.
func usageAt(used int64) Usage { return Usage{Capacity: 1000, Available: 1000 - used} }

func TestPlanThresholds(t *testing.T) {
	p := Policy{HighThresholdPercent: 85, LowThresholdPercent: 80}
	imgs := []Record{{ID: "a", Size: 500, Created: t0.Add(-time.Hour), FirstSeen: t0.Add(-time.Hour)}}
	for _, tc := range []struct {
		name   string
		p      Policy
		u      Usage
		toFree int64
	}{
		{"below high", p, usageAt(840), 0},
		{"at high", p, usageAt(850), 50},
		{"rounded up as the kubelet's", p, usageAt(841), 41},
		{"full", p, usageAt(1000), 200},
		{"high 100 is off", Policy{HighThresholdPercent: 100, LowThresholdPercent: 80}, usageAt(1000), 0},
		{"no capacity", p, Usage{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := tc.p.Plan(tc.u, imgs, nil, t0)
			if plan.BytesToFree != tc.toFree {
				t.Errorf("BytesToFree = %d, want %d (usage %d%%)", plan.BytesToFree, tc.toFree, tc.u.Percent())
			}
			if want := tc.toFree > 0; (len(plan.Candidates) > 0) != want {
				t.Errorf("candidates %v, want some: %v", ids(plan.Candidates), want)
			}
		})
	}
}

func TestPlanOrderAndExclusions(t *testing.T) {
	p := Policy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: 2 * time.Minute}
	seen := t0.Add(-time.Hour)
	imgs := []Record{
		{ID: "used-recently", Size: 100, Created: t0.Add(-1000 * time.Hour), FirstSeen: seen, LastUsed: t0.Add(-time.Minute)},
		{ID: "used-long-ago", Size: 100, Created: t0.Add(-time.Hour), FirstSeen: seen, LastUsed: t0.Add(-50 * time.Minute)},
		{ID: "never-used-old", Size: 100, Created: t0.Add(-100 * time.Hour), FirstSeen: seen},
		{ID: "never-used-new", Size: 100, Created: t0.Add(-10 * time.Minute), FirstSeen: seen},
		{ID: "b-tie", Size: 100, Created: t0.Add(-20 * time.Minute), FirstSeen: seen},
		{ID: "a-tie", Size: 100, Created: t0.Add(-20 * time.Minute), FirstSeen: seen},
		{ID: "in-use", Size: 100, Created: t0.Add(-900 * time.Hour), FirstSeen: seen},
		{ID: "just-seen", Size: 100, Created: t0.Add(-900 * time.Hour), FirstSeen: t0.Add(-time.Minute)},
		{ID: "seen-min-age-ago", Size: 100, Created: t0.Add(-30 * time.Minute), FirstSeen: t0.Add(-2 * time.Minute)},
	}
	plan := p.Plan(usageAt(900), imgs, map[string]bool{"in-use": true}, t0)
	want := []string{"never-used-old", "used-long-ago", "seen-min-age-ago", "a-tie", "b-tie", "never-used-new", "used-recently"}
	if got := ids(plan.Candidates); !slices.Equal(got, want) {
		t.Errorf("candidates %v, want %v", got, want)
	}
	if plan.BytesToFree != 100 {
		t.Errorf("BytesToFree = %d, want 100", plan.BytesToFree)
	}
	if got := ids(plan.Remove()); !slices.Equal(got, want[:1]) {
		t.Errorf("Remove() = %v, want %v", got, want[:1])
	}
	plan = p.Plan(usageAt(1000), imgs, map[string]bool{"in-use": true}, t0)
	if got := ids(plan.Remove()); !slices.Equal(got, want[:2]) {
		t.Errorf("at 100%%: Remove() = %v, want %v (200 bytes)", got, want[:2])
	}
	// More to free than can be: every candidate, never the excluded.
	plan.BytesToFree = 1 << 40
	if got := ids(plan.Remove()); !slices.Equal(got, want) {
		t.Errorf("short of candidates: Remove() = %v, want all %v", got, want)
	}
}
