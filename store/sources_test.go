package store

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/model"
)

// A source's Since is when its State last changed, stamped by the store: a
// write keeping the state keeps it, whatever else changed.
func TestSourceSinceFollowsState(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(5000, 0))
	s, _ := New(nil, WithClock(clk))
	since := func() time.Time {
		src, err := s.Source(nil, "file")
		if err != nil || src == nil {
			t.Fatalf("%v %v", src, err)
		}
		return src.Since
	}
	put := func(src model.Source) {
		if err := s.UpsertSource(&src); err != nil {
			t.Fatal(err)
		}
	}
	put(model.Source{Name: "file"})
	registered := clk.Now()
	clk.Step(time.Second)
	put(model.Source{Name: "file", Updates: 1}) // still not synced
	if !since().Equal(registered) {
		t.Errorf("Since %v moved without a state change", since())
	}
	put(model.Source{Name: "file", Synced: true, Updates: 2})
	synced := clk.Now()
	clk.Step(time.Second)
	put(model.Source{Name: "file", Synced: true, Updates: 3})
	if !since().Equal(synced) {
		t.Errorf("Since %v, want the sync at %v", since(), synced)
	}
	put(model.Source{Name: "file", Synced: true, LastError: "read: refused"})
	if !since().Equal(clk.Now()) {
		t.Errorf("Since %v, want the failure at %v", since(), clk.Now())
	}
}
