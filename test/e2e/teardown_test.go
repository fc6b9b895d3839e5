package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"

	"github.com/berth-dev/berth/runtime"
)

// TestDeleteManyPodsAtOnce: pods whose files are removed together are
// stopped side by side, each gracefully (SIGTERM) and its sandbox only
// after its app container died, and every container is removed. The
// engine's event stream is the clock.
func TestDeleteManyPodsAtOnce(t *testing.T) {
	const n = 6
	b := startBerth(t, Options{})
	for i := range n {
		writeFile(t, b.Pods, fmt.Sprintf("td%d.yaml", i), podYAML(fmt.Sprintf("td%d", i), Ctr{Name: "app", Args: []string{"sleep"}}))
	}
	for i := range n {
		waitPodRunning(t, b.Node, fmt.Sprintf("td%d", i), "app")
	}

	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	msgs, errs := cli().Events(ctx, events.ListOptions{Filters: filters.NewArgs(
		filters.Arg("type", string(events.ContainerEventType)),
		filters.Arg("event", "kill"), filters.Arg("event", "die"), filters.Arg("event", "destroy"),
		filters.Arg("label", runtime.LabelNode+"="+b.Node))})
	for i := range n {
		removeFile(t, b.Pods, fmt.Sprintf("td%d.yaml", i))
	}

	type podEnd struct {
		appKilled, appDied, sandboxKilled int64
		signals                           []string
	}
	pods := map[string]*podEnd{}
	// inFlight counts pods with a container killed and a container left;
	// most is its highest value.
	inFlight, most, destroyed := 0, 0, 0
	left := map[string]int{}
	for destroyed < 2*n {
		var m events.Message
		select {
		case m = <-msgs:
		case err := <-errs:
			t.Fatalf("docker events: %v (%d of %d containers destroyed)", err, destroyed, 2*n)
		}
		pod, ctr := m.Actor.Attributes[runtime.LabelPodName], m.Actor.Attributes[runtime.LabelContainerName]
		p := pods[pod]
		if p == nil {
			p = &podEnd{}
			pods[pod] = p
			left[pod] = 2
			inFlight++
			most = max(most, inFlight)
		}
		switch {
		case m.Action == events.ActionKill && ctr == "app":
			p.appKilled = m.TimeNano
			p.signals = append(p.signals, m.Actor.Attributes["signal"])
		case m.Action == events.ActionKill:
			p.sandboxKilled = m.TimeNano
		case m.Action == events.ActionDie && ctr == "app":
			p.appDied = m.TimeNano
		case m.Action == events.ActionDestroy:
			destroyed++
			if left[pod]--; left[pod] == 0 {
				inFlight--
			}
		}
	}
	if len(pods) != n {
		t.Fatalf("events of %d pods, want %d", len(pods), n)
	}
	for name, p := range pods {
		if p.appKilled == 0 || p.appDied == 0 || p.sandboxKilled == 0 {
			t.Errorf("%s: app killed at %d, died at %d, sandbox killed at %d: an event is missing", name, p.appKilled, p.appDied, p.sandboxKilled)
			continue
		}
		if p.sandboxKilled < p.appDied {
			t.Errorf("%s: sandbox stopped %v before its app died", name, time.Duration(p.appDied-p.sandboxKilled))
		}
		if p.signals[0] != "15" {
			t.Errorf("%s: app sent signals %v, want SIGTERM (15) first", name, p.signals)
		}
	}
	if most < 2 {
		t.Errorf("at most %d pods were stopping at once, want them side by side", most)
	}
	for i := range n {
		waitPodGone(t, b.Node, fmt.Sprintf("td%d", i))
	}
	t.Logf("%d pods, at most %d stopping at once", n, most)
}
