package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/events"
)

func TestDescribeCommand(t *testing.T) {
	a := newCLIAPI(t)
	a.addPod(t, "default", "web", "app")
	a.ev.Record(events.Event{Time: time.Now(), Namespace: "default", Pod: "web", Container: "app", Type: events.Normal, Reason: "Started", Message: "Started container app"})
	a.ev.Record(events.Event{Time: time.Now(), Namespace: "default", Pod: "other", Type: events.Normal, Reason: "Killing", Message: "not this pod"})
	for _, args := range [][]string{{"describe", "web"}, {"describe", "pod", "web"}, {"describe", "pods", "web", "-n", "default"}, {"describe", "pod/web"}} {
		out, _, err := runCLI(t, append(args, a.flags()...)...)
		if err != nil {
			t.Fatalf("berth %s: %v", strings.Join(args, " "), err)
		}
		for _, want := range []string{"Name:", "web", "Status:", "Running", "Started container app", "Source:"} {
			if !strings.Contains(out, want) {
				t.Errorf("berth %s lacks %q:\n%s", strings.Join(args, " "), want, out)
			}
		}
		if strings.Contains(out, "not this pod") {
			t.Errorf("another pod's event shown:\n%s", out)
		}
	}
	if _, _, err := runCLI(t, append([]string{"describe", "nope"}, a.flags()...)...); err == nil || err.Error() != `Error from server (NotFound): pods "nope" not found` {
		t.Errorf("missing pod: %v", err)
	}
	if _, _, err := runCLI(t, append([]string{"describe", "node", "x"}, a.flags()...)...); err == nil || !strings.Contains(err.Error(), "pods only") {
		t.Errorf("describe node: %v", err)
	}
}
