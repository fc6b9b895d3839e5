package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// A manifest the file source refuses is a Warning event kubectl shows
// (get events, describe node) naming the file and the field, and the
// source's state is a node condition; the refusal coming back after a fix
// is one event whose count rises, and a refused edit of a running pod is
// an event of that pod, shown by describe pod as kubectl shows a repeated
// event. A file refused in a thousand ways is a bounded number of events,
// however often it is rescanned (1 s here), and the pods' events stay.
func TestKubectlEvents(t *testing.T) {
	k := startKubectlEnv(t)
	node := k.b.Node
	cond := "BerthSourceFileReady"

	t.Run("RefusedFile", func(t *testing.T) {
		writeFile(t, k.b.Pods, "bad.yaml", strings.Replace(podYAML("bad", Ctr{Name: "main", Args: []string{"sleep"}}),
			"spec:\n", "spec:\n  restartPolicy: Sometimes\n", 1))
		k.eventually(t, "a Warning event naming bad.yaml and its field", func(r kubectlRun) bool {
			for _, row := range table(r.stdout) {
				line := strings.Join(row, " ")
				if strings.Contains(line, "Warning") && strings.Contains(line, "node/"+node) &&
					strings.Contains(line, "bad.yaml") && strings.Contains(line, "spec.restartPolicy") {
					return true
				}
			}
			return false
		}, "get", "events", "-A")
		k.eventually(t, "describe node shows the refusal and the source's condition", func(r kubectlRun) bool {
			return strings.Contains(r.stdout, "InvalidManifest") && strings.Contains(r.stdout, "bad.yaml") &&
				regexpLine(r.stdout, cond+`\s+False\s+.*ManifestRefused\s+.*bad\.yaml`)
		}, "describe", "node", node)

		// Rescans carrying the same refusal record nothing; gone and back,
		// it occurs again: one event, its count rising.
		if err := os.Remove(filepath.Join(k.b.Pods, "bad.yaml")); err != nil {
			t.Fatal(err)
		}
		waitSourceReady(t, k, cond)
		writeFile(t, k.b.Pods, "bad.yaml", strings.Replace(podYAML("bad", Ctr{Name: "main", Args: []string{"sleep"}}),
			"spec:\n", "spec:\n  restartPolicy: Sometimes\n", 1))
		k.eventually(t, "one InvalidManifest event of bad.yaml with count > 1", func(r kubectlRun) bool {
			evs := refusalEvents(t, r.stdout, "bad.yaml")
			return len(evs) == 1 && evs[0].Count > 1 && evs[0].Series != nil && evs[0].Series.Count == evs[0].Count &&
				!evs[0].LastTimestamp.Before(&evs[0].FirstTimestamp)
		}, "get", "events", "-A", "-o", "json")

		if err := os.Remove(filepath.Join(k.b.Pods, "bad.yaml")); err != nil {
			t.Fatal(err)
		}
		waitSourceReady(t, k, cond)
	})

	t.Run("RefusedEditOfARunningPod", func(t *testing.T) {
		good := podYAML("web", Ctr{Name: "main", Args: []string{"sleep"}})
		writeFile(t, k.b.Pods, "web.yaml", good)
		k.ok(t, "wait", "--for=condition=Ready", "pod/web", "--timeout=60s")
		bad := strings.Replace(good, "spec:\n", "spec:\n  restartPolicy: Sometimes\n", 1)
		writeFile(t, k.b.Pods, "web.yaml", bad)
		k.eventually(t, "describe pod web shows the refused edit", func(r kubectlRun) bool {
			return regexpLine(r.stdout, `Warning\s+InvalidManifest\s+.*web\.yaml.*spec\.restartPolicy`)
		}, "describe", "pod", "web")
		writeFile(t, k.b.Pods, "web.yaml", good)
		waitSourceReady(t, k, cond)
		writeFile(t, k.b.Pods, "web.yaml", bad)
		k.eventually(t, "describe pod web shows the refused edit as a repeated event", func(r kubectlRun) bool {
			return regexpLine(r.stdout, `Warning\s+InvalidManifest\s+.*\(x\d+ over .*\).*web\.yaml.*spec\.restartPolicy`)
		}, "describe", "pod", "web")
		// kubectl get events -o wide: COUNT before NAME, LAST SEEN first.
		k.eventually(t, "get events -o wide shows one event of the edit with COUNT > 1", func(r kubectlRun) bool {
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			return len(lines) == 2 && strings.HasPrefix(lines[0], "LAST SEEN") && strings.Contains(lines[0], "COUNT   NAME") &&
				regexpLine(lines[1], `\s([2-9]|\d\d+)\s+web\.[0-9a-f]+$`)
		}, "get", "events", "--field-selector", "involvedObject.name=web,reason=InvalidManifest", "-o", "wide")
		writeFile(t, k.b.Pods, "web.yaml", good)
		waitSourceReady(t, k, cond)
	})

	t.Run("ManyRefusedAreBounded", func(t *testing.T) {
		writeFile(t, k.b.Pods, "web.yaml", podYAML("web", Ctr{Name: "main", Args: []string{"sleep"}}))
		k.ok(t, "wait", "--for=condition=Ready", "pod/web", "--timeout=60s")
		// More refusals than the store keeps events, each its own message:
		// pods the node cannot fit.
		const many = 1100
		var b strings.Builder
		for n := range many {
			fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: many-%04d}\nspec:\n  containers:\n"+
				"  - {name: main, image: %s, resources: {requests: {cpu: \"100000\"}}}\n", n, testImage)
		}
		writeFile(t, k.b.Pods, "many.yaml", b.String())
		more := fmt.Sprintf("and %d more manifests refused", many-10)
		k.eventually(t, "at most 10 events of many.yaml and one counting the rest", func(r kubectlRun) bool {
			return len(eventsOf(t, r.stdout, "ManifestRefused", "many.yaml")) == 10 && strings.Contains(r.stdout, more)
		}, "get", "events", "-A", "-o", "json")
		// A refusal recorded after many.yaml's proves a later rescan, which
		// carried many.yaml's refusals again and recorded none of them.
		writeFile(t, k.b.Pods, "later.yaml", strings.Replace(podYAML("later", Ctr{Name: "main", Args: []string{"sleep"}}),
			"spec:\n", "spec:\n  restartPolicy: Sometimes\n", 1))
		r := k.eventually(t, "the later file's refusal", func(r kubectlRun) bool {
			return len(refusalEvents(t, r.stdout, "later.yaml")) == 1
		}, "get", "events", "-A", "-o", "json")
		evs := eventsOf(t, r.stdout, "ManifestRefused", "many.yaml")
		for _, e := range evs {
			if e.Count > 1 {
				t.Errorf("event %q occurred %d times: rescans of an unchanged file record it again", e.Message, e.Count)
			}
		}
		if len(evs) != 10 {
			t.Errorf("%d events of many.yaml, want 10", len(evs))
		}
		web := k.ok(t, "get", "events", "--field-selector", "involvedObject.name=web,reason=Started", "-o", "name")
		if strings.TrimSpace(web.stdout) == "" {
			t.Error("the refusals pushed out the running pod's events")
		}
		for _, f := range []string{"many.yaml", "later.yaml"} {
			if err := os.Remove(filepath.Join(k.b.Pods, f)); err != nil {
				t.Fatal(err)
			}
		}
		waitSourceReady(t, k, cond)
	})
}

// waitSourceReady waits for the node condition cond to be True: the source
// read, every manifest admitted.
func waitSourceReady(t *testing.T, k *kubectlEnv, cond string) {
	t.Helper()
	k.eventually(t, cond+" True", func(r kubectlRun) bool {
		var n v1.Node
		if json.Unmarshal([]byte(r.stdout), &n) != nil {
			return false
		}
		for _, c := range n.Status.Conditions {
			if string(c.Type) == cond {
				return c.Status == v1.ConditionTrue
			}
		}
		return false
	}, "get", "node", k.b.Node, "-o", "json")
}

// regexpLine reports whether a line of out matches re.
func regexpLine(out, re string) bool { return regexp.MustCompile(`(?m)` + re).MatchString(out) }

// refusalEvents are the InvalidManifest events of kubectl's JSON event
// list whose message names file.
func refusalEvents(t *testing.T, out, file string) []v1.Event {
	t.Helper()
	return eventsOf(t, out, "InvalidManifest", file)
}

// eventsOf are the events of kubectl's JSON event list with reason whose
// message names file.
func eventsOf(t *testing.T, out, reason, file string) []v1.Event {
	t.Helper()
	var l v1.EventList
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		return nil
	}
	var evs []v1.Event
	for _, e := range l.Items {
		if e.Reason == reason && strings.Contains(e.Message, file) {
			evs = append(evs, e)
		}
	}
	return evs
}
