package cluster

import (
	"encoding/json"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

// A pod's first Running is written at once, its Pending before it not at
// all; a burst of pods Running is one write at once and one more a
// coalesce window later; a pod gone has its key deleted at once. The
// publisher's clock is fake and steps only where the test says: a write
// that needs no step was not held back.
func TestUrgentStatusWrittenAtOnce(t *testing.T) {
	e := testutil.StartEtcd(t)
	obs := &countingObserver{}
	cli := client(t, e, obs)
	check := client(t, e, nil)
	st, _ := store.New(nil)
	m := &countingMetrics{}
	clk := clocktesting.NewFakeClock(time.Now())
	member(t, cli, "n1", st, 10*time.Second, time.Second, clk, m)
	eventually(t, 5*time.Second, "the node key, written at once under the new lease", func() bool {
		_, _, ok := get(t, check, DefaultNodesPrefix+"n1")
		return ok
	})
	phase := func(name string) v1.PodPhase {
		v, _, _ := get(t, check, PodKey(StatusPrefix("n1"), "default", name))
		var s v1.PodStatus
		_ = json.Unmarshal([]byte(v), &s)
		return s.Phase
	}
	running := func(name string) {
		t.Helper()
		if _, err := st.UpdatePod("default/"+name, func(p *model.Pod) bool { p.Status.Phase = v1.PodRunning; return true }); err != nil {
			t.Fatal(err)
		}
	}

	clk.Step(DefaultStatusCoalesce)
	if err := st.UpsertPod(testPod("a", v1.PodPending)); err != nil {
		t.Fatal(err)
	}
	running("a")
	eventually(t, 5*time.Second, "a Running with the clock standing still", func() bool {
		return phase("a") == v1.PodRunning && m.writes.Load() > 0
	})
	if n := m.writes.Load(); n != 1 {
		t.Errorf("%d status keys written for one pod Pending then Running, want 1 (Running only)", n)
	}

	clk.Step(DefaultStatusCoalesce)
	txns := obs.count("txn")
	for _, name := range []string{"b", "c", "d"} {
		if err := st.UpsertPod(testPod(name, v1.PodRunning)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 5*time.Second, "b Running with the clock standing still", func() bool {
		return phase("b") == v1.PodRunning && m.writes.Load() > 1
	})
	clk.Step(DefaultStatusCoalesce)
	eventually(t, 5*time.Second, "c, d Running a coalesce window later", func() bool {
		return phase("c") == v1.PodRunning && phase("d") == v1.PodRunning && m.writes.Load() == 4
	})
	if n := obs.count("txn") - txns; n > 2 {
		t.Errorf("%d transactions for a burst of 3 pods Running, want at most 2", n)
	}

	clk.Step(DefaultStatusCoalesce)
	if err := st.DeletePod("default/b"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "b's key deleted with the clock standing still", func() bool {
		_, _, ok := get(t, check, PodKey(StatusPrefix("n1"), "default", "b"))
		return !ok
	})
}
