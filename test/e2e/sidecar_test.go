package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/runtime"
)

// sidecarManifest is a pod with two sidecars, proxy (HTTP on 8081, gated
// by a startup probe) and agent, then the app container, whose args are
// appArgs; restartPolicy policy.
func sidecarManifest(name, policy, appArgs string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %[1]s
spec:
  restartPolicy: %[2]s
  terminationGracePeriodSeconds: 5
  initContainers:
    - name: proxy
      image: %[3]q
      restartPolicy: Always
      args: [serve]
      env: [{name: PORT, value: "8081"}]
      startupProbe: {httpGet: {path: /healthz, port: 8081}, periodSeconds: 1}
      readinessProbe: {httpGet: {path: /healthz, port: 8081}, periodSeconds: 1}
    - name: agent
      image: %[3]q
      restartPolicy: Always
      args: [sleep]
  containers:
    - name: app
      image: %[3]q
      args: [%[4]s]
`, name, policy, testImage, appArgs)
}

// startedAt is when the engine started container id.
func startedAt(t *testing.T, id string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, inspect(t, id).State.StartedAt)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// TestSidecarContainers: sidecars start in order before the app container
// and keep running beside it, a killed sidecar is restarted alone, and a
// deleted pod stops its app container first, then its sidecars in reverse
// order (the engine's die events say when each process ended).
func TestSidecarContainers(t *testing.T) {
	b := startBerth(t, Options{})
	writeFile(t, b.Pods, "sc.yaml", sidecarManifest("sc", "Always", "sleep"))
	ids := waitPodRunning(t, b.Node, "sc", "proxy", "agent", "app")
	proxy, agent, app := startedAt(t, ids["proxy"]), startedAt(t, ids["agent"]), startedAt(t, ids["app"])
	if !proxy.Before(agent) || !agent.Before(app) {
		t.Fatalf("start order: proxy %v, agent %v, app %v", proxy, agent, app)
	}
	p := status(t, b, "sc", "Ready with both sidecars ready", func(p *v1.Pod) bool {
		ics := p.Status.InitContainerStatuses
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodReady && c.Status == v1.ConditionTrue {
				return len(ics) == 2 && ics[0].Ready && ics[1].Ready
			}
		}
		return false
	})
	if p.Status.Phase != v1.PodRunning || !*p.Status.InitContainerStatuses[0].Started || p.Status.InitContainerStatuses[0].State.Running == nil {
		t.Fatalf("status %+v", p.Status)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cli().ContainerKill(ctx, ids["agent"], "SIGKILL"); err != nil {
		t.Fatal(err)
	}
	var again map[string]string
	waitFor(t, waitLong, "agent restarted", func() (bool, string) {
		list := podContainers(t, b.Node, "sc")
		var ok bool
		again, ok = exactlyOne(list, []string{"POD", "proxy", "agent", "app"})
		return ok && again["agent"] != ids["agent"], describe(list)
	})
	if again["app"] != ids["app"] || again["proxy"] != ids["proxy"] || again["POD"] != ids["POD"] {
		t.Fatalf("a sidecar's restart replaced other containers: %v, was %v", again, ids)
	}
	if n := inspect(t, again["agent"]).Config.Labels[runtime.LabelRestartCount]; n != "1" {
		t.Errorf("restarted agent has restart count %q, want 1", n)
	}
	status(t, b, "sc", "agent's restart counted", func(p *v1.Pod) bool {
		ics := p.Status.InitContainerStatuses
		return len(ics) == 2 && ics[1].RestartCount == 1 && ics[1].State.Running != nil
	})

	dies, errs := cli().Events(ctx, events.ListOptions{Filters: filters.NewArgs(
		filters.Arg("type", string(events.ContainerEventType)), filters.Arg("event", "die"),
		filters.Arg("label", runtime.LabelNode+"="+b.Node), filters.Arg("label", runtime.LabelPodName+"=sc"))})
	removeFile(t, b.Pods, "sc.yaml")
	died := map[string]int64{}
	for len(died) < 4 {
		select {
		case m := <-dies:
			died[m.Actor.Attributes[runtime.LabelContainerName]] = m.TimeNano
		case err := <-errs:
			t.Fatalf("docker events: %v (died so far: %v)", err, died)
		}
	}
	waitPodGone(t, b.Node, "sc")
	order := []string{"app", "agent", "proxy", "POD"}
	for i := 1; i < len(order); i++ {
		if died[order[i-1]] >= died[order[i]] {
			t.Fatalf("stop order %s, want %v", dieOrder(died), order)
		}
	}
}

// TestSidecarPodCompletes: a Never pod whose app container completed is
// Succeeded once its sidecars, still running then, are stopped: agent
// before proxy, both after the app ended.
func TestSidecarPodCompletes(t *testing.T) {
	b := startBerth(t, Options{})
	writeFile(t, b.Pods, "job.yaml", sidecarManifest("job", "Never", `exit, "0", 3s`))
	p := status(t, b, "job", "Succeeded", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodSucceeded })
	ics := p.Status.InitContainerStatuses
	if len(ics) != 2 || ics[0].State.Terminated == nil || ics[1].State.Terminated == nil || ics[0].RestartCount != 0 {
		t.Fatalf("sidecar statuses %+v", ics)
	}
	finished := map[string]time.Time{}
	for _, c := range podContainers(t, b.Node, "job") {
		in := inspect(t, c.ID)
		if in.State.Running {
			t.Fatalf("%s still runs in a Succeeded pod", c.Labels[runtime.LabelContainerName])
		}
		finished[c.Labels[runtime.LabelContainerName]], _ = time.Parse(time.RFC3339Nano, in.State.FinishedAt)
	}
	if !finished["app"].Before(finished["agent"]) || !finished["agent"].Before(finished["proxy"]) {
		t.Fatalf("finished: app %v, agent %v, proxy %v", finished["app"], finished["agent"], finished["proxy"])
	}
}

// dieOrder renders containers by when they died.
func dieOrder(died map[string]int64) string {
	names := make([]string, 0, len(died))
	for n := range died {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return died[names[i]] < died[names[j]] })
	return strings.Join(names, " < ")
}
