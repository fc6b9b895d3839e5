package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// A manifest the file source refuses is a Warning event kubectl shows
// (get events, describe node) naming the file and the field, and the
// source's state is a node condition; the refusal, repeated on every
// rescan (1 s here), is one event whose count rises, and a refused edit of
// a running pod is an event of that pod, shown by describe pod as kubectl
// shows a repeated event.
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

		// Rescans repeat the refusal: one event, its count rising.
		k.eventually(t, "one InvalidManifest event of bad.yaml with count > 1", func(r kubectlRun) bool {
			evs := refusalEvents(t, r.stdout, "bad.yaml")
			return len(evs) == 1 && evs[0].Count > 1 && evs[0].Series != nil && evs[0].Series.Count == evs[0].Count &&
				!evs[0].LastTimestamp.Before(&evs[0].FirstTimestamp)
		}, "get", "events", "-A", "-o", "json")

		writeFile(t, k.b.Pods, "bad.yaml", podYAML("bad", Ctr{Name: "main", Args: []string{"sleep"}}))
		k.eventually(t, "the fixed file clears the source's error state", func(r kubectlRun) bool {
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
		}, "get", "node", node, "-o", "json")
	})

	t.Run("RefusedEditOfARunningPod", func(t *testing.T) {
		good := podYAML("web", Ctr{Name: "main", Args: []string{"sleep"}})
		writeFile(t, k.b.Pods, "web.yaml", good)
		k.ok(t, "wait", "--for=condition=Ready", "pod/web", "--timeout=60s")
		writeFile(t, k.b.Pods, "web.yaml", strings.Replace(good, "spec:\n", "spec:\n  restartPolicy: Sometimes\n", 1))
		k.eventually(t, "describe pod web shows the refused edit as a repeated event", func(r kubectlRun) bool {
			return regexpLine(r.stdout, `Warning\s+InvalidManifest\s+.*\(x\d+ over .*\).*web\.yaml.*spec\.restartPolicy`)
		}, "describe", "pod", "web")
		// kubectl get events -o wide: COUNT before NAME, LAST SEEN first.
		k.eventually(t, "get events -o wide shows one event of the edit with COUNT > 1", func(r kubectlRun) bool {
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			return len(lines) == 2 && strings.HasPrefix(lines[0], "LAST SEEN") && strings.Contains(lines[0], "COUNT   NAME") &&
				regexpLine(lines[1], `\s([2-9]|\d\d+)\s+web\.[0-9a-f]+$`)
		}, "get", "events", "--field-selector", "involvedObject.name=web,reason=InvalidManifest", "-o", "wide")
	})
}

// regexpLine reports whether a line of out matches re.
func regexpLine(out, re string) bool { return regexp.MustCompile(`(?m)` + re).MatchString(out) }

// refusalEvents are the InvalidManifest events of kubectl's JSON event
// list whose message names file.
func refusalEvents(t *testing.T, out, file string) []v1.Event {
	t.Helper()
	var l v1.EventList
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		return nil
	}
	var evs []v1.Event
	for _, e := range l.Items {
		if e.Reason == "InvalidManifest" && strings.Contains(e.Message, file) {
			evs = append(evs, e)
		}
	}
	return evs
}
