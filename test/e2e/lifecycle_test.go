package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	dockerevents "github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"

	"github.com/berth-dev/berth/events"
	"github.com/berth-dev/berth/runtime"
)

// manifest renders a one-container pod; spec is YAML indented for the
// container (6 spaces), podSpec extra pod-level lines (2 spaces).
func manifest(name, podSpec, spec string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 2
%s  containers:
    - name: app
      image: %q
%s`, name, podSpec, testImage, spec)
}

// status waits until the pod's status satisfies cond and returns it.
func status(tb testing.TB, b *Berth, pod, what string, cond func(p *v1.Pod) bool) *v1.Pod {
	tb.Helper()
	var got *v1.Pod
	waitFor(tb, waitLong, pod+": "+what, func() (bool, string) {
		p, err := b.Pod(pod)
		if err != nil || p == nil {
			return false, fmt.Sprint(err)
		}
		got = p
		return cond(p), fmt.Sprintf("phase=%s reason=%q statuses=%+v", p.Status.Phase, p.Status.Reason, p.Status.ContainerStatuses)
	})
	return got
}

func restarts(p *v1.Pod) int32 {
	if len(p.Status.ContainerStatuses) == 0 {
		return 0
	}
	return p.Status.ContainerStatuses[0].RestartCount
}

func podEvents(tb testing.TB, b *Berth, pod string) []events.Event {
	tb.Helper()
	var evs []events.Event
	if err := b.getJSON("/events?namespace=default&pod="+pod, &evs); err != nil {
		tb.Fatal(err)
	}
	return evs
}

func hasEvent(evs []events.Event, reason string) bool {
	for _, e := range evs {
		if e.Reason == reason {
			return true
		}
	}
	return false
}

// TestProbesTriggerTheRightAction: each probe type, on the real engine.
func TestProbesTriggerTheRightAction(t *testing.T) {
	b := startBerth(t, Options{})
	probe := func(kind, handler string) string {
		return fmt.Sprintf("      %s:\n%s        periodSeconds: 1\n        failureThreshold: 1\n", kind, handler)
	}
	httpGet := func(path string) string {
		return fmt.Sprintf("        httpGet: {path: %s, port: 8080}\n", path)
	}
	pods := map[string]string{
		// liveness httpGet: /healthz starts failing after 1 s.
		"live-http": manifest("live-http", "", "      args: [serve]\n      env: [{name: HEALTHZ_FAIL_AFTER, value: 1s}]\n"+
			probe("livenessProbe", httpGet("/healthz"))),
		// liveness exec: the command always fails.
		"live-exec": manifest("live-exec", "", "      args: [sleep]\n"+
			probe("livenessProbe", "        exec: {command: [/testapp, exit, \"1\"]}\n")),
		// liveness tcpSocket: nothing listens on 9999.
		"live-tcp": manifest("live-tcp", "", "      args: [serve]\n"+
			probe("livenessProbe", "        tcpSocket: {port: 9999}\n")),
		// readiness: /ready answers 503 for the first 3 s.
		"ready": manifest("ready", "", "      args: [serve]\n      env: [{name: READY_AFTER, value: 3s}]\n"+
			probe("readinessProbe", httpGet("/ready"))+"        successThreshold: 1\n"),
		// startup exec never succeeds; the healthy liveness probe must not run first.
		"startup": manifest("startup", "", "      args: [serve]\n"+
			probe("startupProbe", "        exec: {command: [/testapp, exit, \"1\"]}\n")+
			probe("livenessProbe", httpGet("/healthz"))),
	}
	for name, m := range pods {
		writeFile(t, b.Pods, name+".yaml", m)
	}
	for _, name := range []string{"live-http", "live-exec", "live-tcp", "startup"} {
		status(t, b, name, "restarted after its probe failed", func(p *v1.Pod) bool { return restarts(p) >= 1 })
		evs := podEvents(t, b, name)
		if !hasEvent(evs, "Unhealthy") || !hasEvent(evs, "Killing") {
			t.Errorf("%s: events lack Unhealthy/Killing: %+v", name, evs)
		}
	}
	p := status(t, b, "ready", "running but not ready", func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Running != nil
	})
	if p.Status.ContainerStatuses[0].Ready {
		t.Log("note: readiness passed before the first look (machine slow)")
	}
	p = status(t, b, "ready", "Ready", func(p *v1.Pod) bool {
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodReady {
				return c.Status == v1.ConditionTrue
			}
		}
		return false
	})
	if restarts(p) != 0 {
		t.Errorf("readiness failures restarted the container %d times", restarts(p))
	}
	text, err := b.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	for _, series := range []string{`berth_probe_results_total{probe="liveness",result="failure"}`,
		`berth_probe_results_total{probe="readiness",result="success"}`, `berth_probe_results_total{probe="startup",result="failure"}`} {
		if v, _ := metricValue(text, series); v < 1 {
			t.Errorf("%s = %v", series, v)
		}
	}
}

// TestCrashLoopBackoffGrows: with backoff.initial 200ms the gaps between
// restarts are at least 0, 200, 400, 800 ms (the first restart is
// immediate, as in the kubelet); status shows CrashLoopBackOff.
func TestCrashLoopBackoffGrows(t *testing.T) {
	b := startBerth(t, Options{})
	begun := time.Now()
	writeFile(t, b.Pods, "crash.yaml", manifest("crash", "", "      args: [exit, \"1\"]\n"))
	seenBackoff := false
	status(t, b, "crash", "4 restarts", func(p *v1.Pod) bool {
		if cs := p.Status.ContainerStatuses; len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "CrashLoopBackOff" {
			seenBackoff = true
			if lt := cs[0].LastTerminationState.Terminated; lt == nil || lt.ExitCode != 1 {
				t.Errorf("CrashLoopBackOff without last state exit 1: %+v", cs[0].LastTerminationState)
			}
		}
		return restarts(p) >= 4
	})
	if !seenBackoff {
		t.Error("never saw CrashLoopBackOff in the status")
	}
	// Exited instances are collected: the latest and the one before it stay.
	waitFor(t, waitLong, "at most 2 instances of the crashing container", func() (bool, string) {
		n := 0
		list := podContainers(t, b.Node, "crash")
		for _, c := range list {
			if c.Labels[runtime.LabelContainerName] == "app" {
				n++
			}
		}
		return n <= 2, describe(list)
	})
	// Identical Started events aggregate (their count rises), so each
	// start's time is the engine's: its start events of the container.
	if evs := podEvents(t, b, "crash"); !hasEvent(evs, "Started") {
		t.Errorf("no Started event: %+v", evs)
	}
	starts := engineStarts(t, b.Node, "crash", "app", begun)
	sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
	if len(starts) < 5 {
		t.Fatalf("%d Started events", len(starts))
	}
	for i, min := range []time.Duration{0, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond} {
		if gap := starts[i+1].Sub(starts[i]); gap < min {
			t.Errorf("restart %d came %v after the previous start, want at least %v", i+1, gap, min)
		}
	}
}

// TestInitContainersRunInOrder: init containers run one after another to
// completion before the app starts; status names the running one.
func TestInitContainersRunInOrder(t *testing.T) {
	b := startBerth(t, Options{})
	writeFile(t, b.Pods, "init.yaml", manifest("init", fmt.Sprintf(`  initContainers:
    - {name: first, image: %q, args: [exit, "0", 2s]}
    - {name: second, image: %q, args: [exit, "0", 1s]}
`, testImage, testImage), "      args: [sleep]\n"))
	status(t, b, "init", "first init container running", func(p *v1.Pod) bool {
		ics := p.Status.InitContainerStatuses
		return p.Status.Phase == v1.PodPending && len(ics) == 2 && ics[0].State.Running != nil && ics[1].State.Waiting != nil
	})
	status(t, b, "init", "Running", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodRunning })
	byName := map[string]time.Time{}
	ended := map[string]time.Time{}
	for _, c := range podContainers(t, b.Node, "init") {
		in := inspect(t, c.ID)
		name := c.Labels[runtime.LabelContainerName]
		byName[name], _ = time.Parse(time.RFC3339Nano, in.State.StartedAt)
		ended[name], _ = time.Parse(time.RFC3339Nano, in.State.FinishedAt)
	}
	if !ended["first"].Before(byName["second"]) || !ended["second"].Before(byName["app"]) {
		t.Fatalf("order: first %v–%v, second %v–%v, app from %v",
			byName["first"], ended["first"], byName["second"], ended["second"], byName["app"])
	}
	p, _ := b.Pod("init")
	for _, s := range p.Status.InitContainerStatuses {
		if s.State.Terminated == nil || s.State.Terminated.Reason != "Completed" {
			t.Errorf("init container %s status %+v", s.Name, s.State)
		}
	}
}

// TestLifecycleHooks: postStart runs after start; preStop runs while the
// container still runs (an exec into a stopped container is impossible, so
// the file it writes proves the order), before the stop.
func TestLifecycleHooks(t *testing.T) {
	b := startBerth(t, Options{})
	hooks := t.TempDir()
	writeFile(t, b.Pods, "hooks.yaml", manifest("hooks", fmt.Sprintf(`  volumes: [{name: hooks, hostPath: {path: %s}}]
`, hooks), `      args: [sleep]
      volumeMounts: [{name: hooks, mountPath: /hooks}]
      lifecycle:
        postStart: {exec: {command: [/testapp, touch, /hooks/poststart]}}
        preStop: {exec: {command: [/testapp, touch, /hooks/prestop]}}
`))
	waitPodRunning(t, b.Node, "hooks", "app")
	waitFor(t, waitLong, "postStart hook file", func() (bool, string) {
		_, err := os.Stat(filepath.Join(hooks, "poststart"))
		return err == nil, fmt.Sprint(err)
	})
	if _, err := os.Stat(filepath.Join(hooks, "prestop")); err == nil {
		t.Fatal("preStop ran before any stop")
	}
	removeFile(t, b.Pods, "hooks.yaml")
	waitPodGone(t, b.Node, "hooks")
	if _, err := os.Stat(filepath.Join(hooks, "prestop")); err != nil {
		t.Fatalf("preStop hook did not run before the stop: %v", err)
	}
}

// TestMissingImageBackOff: an image that cannot be pulled shows
// ErrImagePull then ImagePullBackOff, while other pods run.
func TestMissingImageBackOff(t *testing.T) {
	b := startBerth(t, Options{})
	writeFile(t, b.Pods, "ok.yaml", sleeper("ok"))
	writeFile(t, b.Pods, "missing.yaml", strings.Replace(sleeper("missing"), testImage, "registry.invalid/berth/nope:1", 1))
	waitPodRunning(t, b.Node, "ok", "app")
	p := status(t, b, "missing", "ImagePullBackOff", func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "ImagePullBackOff"
	})
	if p.Status.Phase != v1.PodPending {
		t.Errorf("phase %s, want Pending", p.Status.Phase)
	}
	if !hasEvent(podEvents(t, b, "missing"), "Failed") {
		t.Error("no Failed event for the pull")
	}
	text, _ := b.Metrics()
	if v, _ := metricValue(text, `berth_image_pulls_total{result="failure"}`); v < 1 {
		t.Errorf("image pull failures %v", v)
	}
}

// TestStatusesLikeKubernetes compares berth's status with what the kubelet
// reports for the same pods.
func TestStatusesLikeKubernetes(t *testing.T) {
	b := startBerth(t, Options{})
	for name, spec := range map[string][2]string{
		"done":     {"  restartPolicy: Never\n", "      args: [exit, \"0\"]\n"},
		"failed":   {"  restartPolicy: Never\n", "      args: [exit, \"3\"]\n"},
		"onfail":   {"  restartPolicy: OnFailure\n", "      args: [exit, \"0\"]\n"},
		"runs":     {"", "      args: [sleep]\n"},
		"crashing": {"", "      args: [exit, \"2\"]\n"},
	} {
		writeFile(t, b.Pods, name+".yaml", manifest(name, spec[0], spec[1]))
	}
	term := func(p *v1.Pod) *v1.ContainerStateTerminated {
		if len(p.Status.ContainerStatuses) != 1 {
			return nil
		}
		return p.Status.ContainerStatuses[0].State.Terminated
	}
	cond := func(p *v1.Pod, ct v1.PodConditionType) v1.ConditionStatus {
		for _, c := range p.Status.Conditions {
			if c.Type == ct {
				return c.Status
			}
		}
		return ""
	}
	p := status(t, b, "done", "Succeeded", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodSucceeded })
	if tt := term(p); tt == nil || tt.Reason != "Completed" || tt.ExitCode != 0 || cond(p, v1.PodReady) != v1.ConditionFalse {
		t.Errorf("done: %+v", p.Status)
	}
	p = status(t, b, "failed", "Failed", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	if tt := term(p); tt == nil || tt.Reason != "Error" || tt.ExitCode != 3 || restarts(p) != 0 {
		t.Errorf("failed: %+v", p.Status)
	}
	status(t, b, "onfail", "Succeeded", func(p *v1.Pod) bool { return p.Status.Phase == v1.PodSucceeded })
	p = status(t, b, "runs", "Running and Ready", func(p *v1.Pod) bool {
		return p.Status.Phase == v1.PodRunning && cond(p, v1.PodReady) == v1.ConditionTrue
	})
	if cs := p.Status.ContainerStatuses[0]; !cs.Ready || cs.State.Running == nil || !strings.HasPrefix(cs.ContainerID, "docker://") ||
		cond(p, v1.PodInitialized) != v1.ConditionTrue || cond(p, v1.ContainersReady) != v1.ConditionTrue || p.Status.StartTime == nil ||
		p.Status.PodIP == "" {
		t.Errorf("runs: %+v", p.Status)
	}
	p = status(t, b, "crashing", "CrashLoopBackOff after a restart", func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount >= 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "CrashLoopBackOff"
	})
	if p.Status.Phase != v1.PodRunning || cond(p, v1.PodReady) != v1.ConditionFalse {
		t.Errorf("crashing: phase %s ready %s (the kubelet says Running, not ready)", p.Status.Phase, cond(p, v1.PodReady))
	}
	if lt := p.Status.ContainerStatuses[0].LastTerminationState.Terminated; lt == nil || lt.ExitCode != 2 || lt.Reason != "Error" {
		t.Errorf("crashing: last state %+v", p.Status.ContainerStatuses[0].LastTerminationState)
	}
}

// TestSlowStopsDoNotHoldWorkers: on the real engine, 8 pods edited at once,
// each stopping for 20 s (a preStop hook within a 30 s grace period), leave
// berth's 4 workers free: a ninth pod starts meanwhile, long before any of
// those stops could end.
func TestSlowStopsDoNotHoldWorkers(t *testing.T) {
	b := startBerth(t, Options{})
	slow := func(name, version string) string {
		return strings.Replace(manifest(name, "", `      args: [sleep]
      env: [{name: VERSION, value: "`+version+`"}]
      lifecycle:
        preStop: {exec: {command: [/testapp, exit, "0", 20s]}}
`), "terminationGracePeriodSeconds: 2", "terminationGracePeriodSeconds: 30", 1)
	}
	names := make([]string, 8)
	for i := range names {
		names[i] = fmt.Sprintf("slow%d", i)
		writeFile(t, b.Pods, names[i]+".yaml", slow(names[i], "1"))
	}
	before := map[string]string{}
	for _, n := range names {
		before[n] = waitPodRunning(t, b.Node, n, "app")["app"]
	}
	edited := time.Now()
	for _, n := range names {
		writeFile(t, b.Pods, n+".yaml", slow(n, "2"))
	}
	// Every edit is under way: its preStop hook runs (an exec in the old
	// container, which keeps running until the hook ends).
	waitFor(t, waitLong, "8 preStop hooks running", func() (bool, string) {
		n := 0
		for _, name := range names {
			c, err := cli().ContainerInspect(context.Background(), before[name])
			if err == nil && c.State.Running && len(c.ExecIDs) > 0 {
				n++
			}
		}
		return n == len(names), fmt.Sprintf("%d of %d", n, len(names))
	})
	start := time.Now()
	writeFile(t, b.Pods, "ninth.yaml", sleeper("ninth"))
	waitPodRunning(t, b.Node, "ninth", "app")
	took := time.Since(start)
	t.Logf("ninth pod running %v after it was written, %v after the 8 edits", took.Round(time.Millisecond), time.Since(edited).Round(time.Millisecond))
	if since := time.Since(edited); since >= 20*time.Second {
		t.Fatalf("the ninth pod ran only %v after the edits: it waited for the stops", since)
	}
	for _, n := range names {
		if c, err := cli().ContainerInspect(context.Background(), before[n]); err != nil || !c.State.Running {
			t.Fatalf("%s's old container is no longer running: the test did not measure slow stops", n)
		}
	}
}

// engineStarts are the times the engine started container ctr of pod on
// node since since, from its event stream (nanosecond times).
func engineStarts(tb testing.TB, node, pod, ctr string, since time.Time) []time.Time {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := filters.NewArgs(filters.Arg("type", "container"), filters.Arg("event", "start"),
		filters.Arg("label", runtime.LabelNode+"="+node), filters.Arg("label", runtime.LabelPodName+"="+pod),
		filters.Arg("label", runtime.LabelContainerName+"="+ctr))
	msgs, errs := cli().Events(ctx, dockerevents.ListOptions{Since: since.Format(time.RFC3339Nano),
		Until: time.Now().Format(time.RFC3339Nano), Filters: f})
	var out []time.Time
	for {
		select {
		case m := <-msgs:
			out = append(out, time.Unix(0, m.TimeNano))
		case err := <-errs:
			if err != nil && err != io.EOF {
				tb.Fatalf("engine events: %v", err)
			}
			return out
		}
	}
}
