package cluster

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

const (
	testInterval = time.Second
	testCoalesce = 50 * time.Millisecond
)

func TestPacerDue(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	p := pacer{interval: testInterval, coalesce: testCoalesce}
	if _, ok := p.due(); ok {
		t.Fatal("due with nothing pending")
	}
	t0 := clk.Now()
	p.changed(t0, true)
	if at, _ := p.due(); !at.Equal(t0) {
		t.Fatalf("first urgent change due at %s, want at once", at.Sub(t0))
	}
	p.wrote(t0)
	if _, ok := p.due(); ok {
		t.Fatal("due after everything was written")
	}

	clk.Step(10 * time.Millisecond)
	p.changed(clk.Now(), false)
	if at, _ := p.due(); !at.Equal(clk.Now().Add(testInterval)) {
		t.Fatalf("ordinary change due after %s, want the interval", at.Sub(clk.Now()))
	}
	clk.Step(20 * time.Millisecond)
	p.changed(clk.Now(), true)
	if at, _ := p.due(); !at.Equal(t0.Add(testCoalesce)) {
		t.Fatalf("urgent change 30 ms after a write due at +%s, want the coalesce window's end", at.Sub(t0))
	}
	clk.Step(testCoalesce)
	p.wrote(clk.Now())

	// A failed write is retried an interval later, urgent or not.
	clk.Step(time.Minute)
	p.changed(clk.Now(), true)
	p.failed(clk.Now())
	if at, _ := p.due(); !at.Equal(clk.Now().Add(testInterval)) {
		t.Fatalf("retry after %s, want the interval", at.Sub(clk.Now()))
	}
}

// A burst of urgent changes every 10 ms for a second: the first is written
// at once, then one write per coalesce window, none of them later than the
// window; after the burst nothing more is written.
func TestPacerCoalescesBursts(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	p := pacer{interval: testInterval, coalesce: testCoalesce}
	start := clk.Now()
	var writes []time.Time
	var waiting []time.Time // changes not written yet
	step := func() {
		if at, ok := p.due(); ok && !at.After(clk.Now()) {
			for _, c := range waiting {
				if d := clk.Now().Sub(c); d > testCoalesce {
					t.Fatalf("a change waited %s, more than the coalesce window", d)
				}
			}
			waiting = nil
			writes = append(writes, clk.Now())
			p.wrote(clk.Now())
		}
	}
	for i := range 100 {
		if i > 0 {
			clk.Step(10 * time.Millisecond)
		}
		step()
		p.changed(clk.Now(), true)
		waiting = append(waiting, clk.Now())
		step()
	}
	for range 100 {
		clk.Step(time.Millisecond)
		step()
	}
	for range 10 {
		clk.Step(testInterval)
		step()
	}
	if len(writes) == 0 || !writes[0].Equal(start) {
		t.Fatalf("writes %v: the first change is not written at once", writes)
	}
	for i := 1; i < len(writes); i++ {
		if gap := writes[i].Sub(writes[i-1]); gap < testCoalesce {
			t.Fatalf("writes %d and %d only %s apart", i-1, i, gap)
		}
	}
	if len(writes) > 22 || len(writes) < 18 {
		t.Errorf("%d writes for 100 changes over a second, want about 20 (one per 50 ms)", len(writes))
	}
	if len(waiting) > 0 {
		t.Errorf("%d changes never written", len(waiting))
	}
}
