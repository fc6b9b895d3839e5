package controller

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/testutil"
)

// logged captures the controller's log of h from now on.
func logged(h *harness) *testutil.SyncBuffer {
	var buf testutil.SyncBuffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	h.ctrl.log, h.ctrl.life.log, h.ctrl.lc.log = log, log, log
	return &buf
}

// count returns how many lines of the log match pattern.
func count(buf *testutil.SyncBuffer, pattern string) int {
	re := regexp.MustCompile(pattern)
	n := 0
	for _, l := range strings.Split(buf.String(), "\n") {
		if re.MatchString(l) {
			n++
		}
	}
	return n
}

// A pod's life reads in the agent log once each: ready, a container exit
// with its code and reason, the crash-loop delay chosen, one stop for an
// edit, the end of its deletion with how long it took.
func TestPodLifeIsLoggedOnce(t *testing.T) {
	h := newHarness(t)
	buf := logged(h)
	key := "default/web"
	want := func(pattern string, n int) {
		t.Helper()
		if got := count(buf, pattern); got != n {
			t.Fatalf("%d log lines match %q, want %d; log:\n%s", got, pattern, n, buf.String())
		}
	}
	h.put(testPod("web", ctr("a", "app:1")))
	h.clock.Step(1500 * time.Millisecond)
	h.settle(key)
	want(`msg="pod ready" pod=default/web took=1.5s$`, 1)

	crash := func() {
		a := h.running(key)["a"]
		h.rt.Exit(a.ID, 1)
		h.ctrl.obs.refresh(context.Background(), a.ID)
		h.settle(key)
		h.settle(key)
	}
	crash() // restarted at once
	want(`msg="container exited" pod=default/web container=a exitCode=1 reason=Error`, 1)
	crash() // waits 10s
	want(`msg="container exited" pod=default/web container=a exitCode=1 reason=Error`, 2)
	want(`msg="back-off restarting failed container" pod=default/web container=a delay=10s`, 1)
	want(`msg="pod no longer ready" pod=default/web reason="ContainersNotReady: containers with unready status: \[a\]"`, 1)
	h.clock.Step(5 * time.Second)
	h.settle(key)
	want(`back-off restarting`, 1)
	h.clock.Step(5 * time.Second)
	h.settle(key)
	want(`msg="pod ready" pod=default/web$`, 1) // again: no took
	crash()                                     // waits 20s
	want(`msg="back-off restarting failed container" pod=default/web container=a delay=20s`, 1)
	h.clock.Step(20 * time.Second)
	h.settle(key)

	h.put(testPod("web", ctr("a", "app:1", "X=2")))
	h.settle(key)
	want(`msg="stopping containers" pod=default/web containers=a reason="container spec changed"`, 1)
	want(`msg="stopping containers"`, 1)
	want(`old exited instance|killing containers`, 0)

	if err := h.st.DeletePod(key); err != nil {
		t.Fatal(err)
	}
	h.clock.Step(time.Second)
	h.settle(key)
	want(`msg="stopping containers" pod=default/web containers=(POD,a|a,POD) reason="pod removed from its source"`, 1)
	want(`msg="pod deleted" pod=default/web took=`, 1)
}
