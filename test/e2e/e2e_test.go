package e2e

// End-to-end tests: each starts its own berth agent (own node name, pods
// directory and root_dir) and runs sequentially. Waits are bounded
// deadlines, not performance assertions.

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/runtime"
)

// getURL is the testapp /get URL on hostPort that fetches target from
// inside the pod.
func getURL(hostPort int, target string) string {
	return fmt.Sprintf("http://127.0.0.1:%d/get?url=%s", hostPort, url.QueryEscape(target))
}

// runWebPod writes the standard two-container pod and waits for it.
func runWebPod(t *testing.T, b *Berth, name string, hostPort int, sideMsg string) map[string]string {
	t.Helper()
	writeFile(t, b.Pods, name+".yaml", webPod(name, hostPort, sideMsg))
	return waitPodRunning(t, b.Node, name, "web", "side")
}

// waitPodStatus polls GET /pods/default/<name> until cond holds.
func waitPodStatus(t *testing.T, b *Berth, name, what string, cond func(p *v1.Pod) (bool, string)) *v1.Pod {
	t.Helper()
	var pod *v1.Pod
	waitFor(t, waitLong, "pod "+name+" "+what, func() (bool, string) {
		p, err := b.Pod(name)
		if err != nil {
			return false, err.Error()
		}
		if p == nil {
			return false, "not found"
		}
		pod = p
		return cond(p)
	})
	return pod
}

// allRunning is a waitPodStatus condition: phase Running and every container
// status running with the given container IDs (when ids is not nil).
func allRunning(ids map[string]string) func(p *v1.Pod) (bool, string) {
	return func(p *v1.Pod) (bool, string) {
		detail := fmt.Sprintf("phase %s, statuses %+v", p.Status.Phase, p.Status.ContainerStatuses)
		if p.Status.Phase != v1.PodRunning || len(p.Status.ContainerStatuses) != len(p.Spec.Containers) {
			return false, detail
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Running == nil {
				return false, detail
			}
			if ids != nil && cs.ContainerID != "docker://"+ids[cs.Name] {
				return false, detail
			}
		}
		return true, ""
	}
}

func uid8(uid string) string {
	s := strings.ReplaceAll(uid, "-", "")
	if len(s) > 8 {
		s = s[:8]
	}
	return s
}

// 1. A two-container pod with a hostPort: published port, localhost between
// containers, labels, Docker names and the /pods status.
func TestTwoContainerPod(t *testing.T) {
	b := startBerth(t, Options{})
	hp := freePort(t)
	ids := runWebPod(t, b, "web", hp, "side-v1")

	httpWant(t, fmt.Sprintf("http://127.0.0.1:%d/", hp), "hello-e2e")
	httpWant(t, getURL(hp, "http://127.0.0.1:8081/env?name=PORT"), "8081")
	httpWant(t, getURL(hp, "http://127.0.0.1:8081/"), "side-v1")

	pod := waitPodStatus(t, b, "web", "Running", allRunning(ids))
	uid := string(pod.UID)
	if uid == "" {
		t.Fatal("GET /pods/default/web: empty metadata.uid")
	}
	for name, id := range ids {
		c := inspect(t, id)
		want := map[string]string{
			runtime.LabelManaged:       "true",
			runtime.LabelPodNamespace:  "default",
			runtime.LabelPodName:       "web",
			runtime.LabelPodUID:        uid,
			runtime.LabelContainerName: name,
			runtime.LabelSource:        "file",
			runtime.LabelNode:          b.Node,
			runtime.LabelRestartCount:  "0",
		}
		for k, v := range want {
			if got := c.Config.Labels[k]; got != v {
				t.Errorf("container %s: label %s = %q, want %q", name, k, got, v)
			}
		}
		if c.Config.Labels[runtime.LabelContainerHash] == "" {
			t.Errorf("container %s: label %s missing", name, runtime.LabelContainerHash)
		}
		re := regexp.MustCompile("^berth_" + regexp.QuoteMeta(name) + "_web_default_" + uid8(uid) + `_[0-9]+$`)
		if n := strings.TrimPrefix(c.Name, "/"); !re.MatchString(n) {
			t.Errorf("container %s: Docker name %q does not match %s", name, n, re)
		}
		if c.HostConfig.RestartPolicy.Name != "no" && c.HostConfig.RestartPolicy.Name != "" {
			t.Errorf("container %s: Docker restart policy %q, want no", name, c.HostConfig.RestartPolicy.Name)
		}
		if name != "POD" && string(c.HostConfig.NetworkMode) != "container:"+ids["POD"] {
			t.Errorf("container %s: network mode %q, want container:<sandbox>", name, c.HostConfig.NetworkMode)
		}
	}

	list, err := b.ListPods()
	if err != nil {
		t.Fatal(err)
	}
	if list.Kind != "PodList" || len(list.Items) != 1 || list.Items[0].Name != "web" {
		t.Fatalf("GET /pods: kind %q, %d items, want one PodList item web: %+v", list.Kind, len(list.Items), list.Items)
	}
	p := list.Items[0]
	if p.Status.Phase != v1.PodRunning {
		t.Errorf("GET /pods: phase %s, want Running", p.Status.Phase)
	}
	got := map[string]bool{}
	for _, cs := range p.Status.ContainerStatuses {
		got[cs.Name] = cs.State.Running != nil && cs.Ready
	}
	if !got["web"] || !got["side"] || len(got) != 2 {
		t.Errorf("GET /pods: container statuses %+v, want web and side running and ready", p.Status.ContainerStatuses)
	}
}

// 2. Editing one container's env recreates only that container.
func TestEditRecreatesOnlyThatContainer(t *testing.T) {
	b := startBerth(t, Options{})
	hp := freePort(t)
	before := runWebPod(t, b, "edit", hp, "side-v1")
	httpWant(t, getURL(hp, "http://127.0.0.1:8081/"), "side-v1")

	writeFile(t, b.Pods, "edit.yaml", webPod("edit", hp, "side-v2"))
	var after map[string]string
	waitFor(t, waitLong, "side recreated", func() (bool, string) {
		list := podContainers(t, b.Node, "edit")
		ids, ok := exactlyOne(list, []string{"POD", "web", "side"})
		after = ids
		return ok && ids["side"] != before["side"], describe(list)
	})
	if after["web"] != before["web"] || after["POD"] != before["POD"] {
		t.Fatalf("edit of side replaced other containers: before %v, after %v", before, after)
	}
	httpWant(t, getURL(hp, "http://127.0.0.1:8081/env?name=MESSAGE"), "side-v2")
	httpWant(t, fmt.Sprintf("http://127.0.0.1:%d/", hp), "hello-e2e")
	assertStable(t, b.Node, "edit", after, 1500*time.Millisecond)
}

// 3. Deleting the manifest removes every container of the pod.
func TestDeleteRemovesPod(t *testing.T) {
	b := startBerth(t, Options{})
	runWebPod(t, b, "gone", 0, "x")
	removeFile(t, b.Pods, "gone.yaml")
	waitPodGone(t, b.Node, "gone")
	waitFor(t, 10*time.Second, "pod gone from /pods", func() (bool, string) {
		l, err := b.ListPods()
		if err != nil {
			return false, err.Error()
		}
		return len(l.Items) == 0, fmt.Sprintf("%d items", len(l.Items))
	})
}

// logLine waits until one line of berth's log contains every part.
func logLine(t *testing.T, b *Berth, parts ...string) string {
	t.Helper()
	var found string
	waitFor(t, 20*time.Second, fmt.Sprintf("a log line containing %q", parts), func() (bool, string) {
		for _, line := range strings.Split(b.LogText(), "\n") {
			ok := true
			for _, p := range parts {
				if !strings.Contains(line, p) {
					ok = false
					break
				}
			}
			if ok {
				found = line
				return true, ""
			}
		}
		return false, "not logged yet"
	})
	return found
}

// 4. Invalid manifests are rejected with file, pod and field named, and a
// valid pod next to them keeps running.
func TestInvalidManifestRejected(t *testing.T) {
	b := startBerth(t, Options{})
	good := runWebPod(t, b, "good", 0, "x")

	noImage := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: noimage\nspec:\n  containers:\n    - name: app\n      args: [serve]\n"
	typo := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: typo\nspec:\n  containers:\n    - name: app\n      imagee: berth/testapp:1\n"
	writeFile(t, b.Pods, "noimage.yaml", noImage)
	writeFile(t, b.Pods, "typo.yaml", typo)

	l1 := logLine(t, b, "noimage.yaml", "default/noimage", "spec.containers[0].image")
	l2 := logLine(t, b, "typo.yaml", "default/typo", "imagee")
	t.Logf("rejections:\n%s\n%s", l1, l2)
	for _, pod := range []string{"noimage", "typo"} {
		if len(fidRejectedLines(b.LogText(), pod)) == 0 {
			t.Errorf("the fidelity tests' fidRejected misses the informer's rejection of %s", pod)
		}
	}

	waitFor(t, 10*time.Second, "berth_manifest_errors_total{source=\"file\"} >= 2", func() (bool, string) {
		m, err := b.Metrics()
		if err != nil {
			return false, err.Error()
		}
		v, _ := metricValue(m, `berth_manifest_errors_total{source="file"}`)
		return v >= 2, fmt.Sprintf("value %v", v)
	})
	// Across at least one rescan and one resync tick, the good pod is untouched
	// and the bad ones never get a container.
	assertStable(t, b.Node, "good", good, 2500*time.Millisecond)
	for _, pod := range []string{"noimage", "typo"} {
		if list := podContainers(t, b.Node, pod); len(list) != 0 {
			t.Errorf("rejected pod %s has containers %s", pod, describe(list))
		}
		if p, err := b.Pod(pod); err != nil || p != nil {
			t.Errorf("GET /pods/default/%s = %v, %v; want 404", pod, p, err)
		}
	}
	waitPodStatus(t, b, "good", "Running", allRunning(good))
}

// 5. An invalid edit keeps the running pod; a fix is applied afterwards.
func TestInvalidEditKeepsRunningPod(t *testing.T) {
	b := startBerth(t, Options{})
	hp := freePort(t)
	ids := runWebPod(t, b, "keep", hp, "v1")

	// side's image set to "": a validation error for a known pod.
	spec := webPod("keep", hp, "v2")
	i := strings.LastIndex(spec, `image: "`+testImage+`"`)
	noImage := spec[:i] + `image: ""` + spec[i+len(`image: "`+testImage+`"`):]
	writeFile(t, b.Pods, "keep.yaml", noImage)
	p := waitPodStatus(t, b, "keep", "rejected-update annotation", func(p *v1.Pod) (bool, string) {
		a := p.Annotations["berth.io/rejected-update"]
		return strings.Contains(a, "keep.yaml") && strings.Contains(a, "spec.containers[1].image"), fmt.Sprintf("annotations %v", p.Annotations)
	})
	t.Logf("rejected update: %s", p.Annotations["berth.io/rejected-update"])
	logLine(t, b, "keep.yaml", "default/keep", "spec.containers[1].image")
	assertStable(t, b.Node, "keep", ids, 2500*time.Millisecond)
	httpWant(t, getURL(hp, "http://127.0.0.1:8081/"), "v1")

	// Broken YAML: the whole file fails to decode; its pod keeps running.
	writeFile(t, b.Pods, "keep.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: keep\nspec: [unclosed\n")
	logLine(t, b, "manifest rejected", "keep.yaml: yaml: line")
	assertStable(t, b.Node, "keep", ids, 2500*time.Millisecond)
	if p, err := b.Pod("keep"); err != nil || p == nil {
		t.Fatalf("GET /pods/default/keep after broken YAML = %v, %v; want the pod", p, err)
	}

	// The fix is applied: side is recreated with the new env.
	writeFile(t, b.Pods, "keep.yaml", webPod("keep", hp, "v3"))
	var after map[string]string
	waitFor(t, waitLong, "side recreated after the fix", func() (bool, string) {
		list := podContainers(t, b.Node, "keep")
		got, ok := exactlyOne(list, []string{"POD", "web", "side"})
		after = got
		return ok && got["side"] != ids["side"], describe(list)
	})
	if after["web"] != ids["web"] || after["POD"] != ids["POD"] {
		t.Fatalf("fix replaced more than side: before %v, after %v", ids, after)
	}
	httpWant(t, getURL(hp, "http://127.0.0.1:8081/"), "v3")
	waitPodStatus(t, b, "keep", "annotation cleared", func(p *v1.Pod) (bool, string) {
		a, ok := p.Annotations["berth.io/rejected-update"]
		return !ok, a
	})
}

// createForeign creates and starts a testapp `sleep` container that berth
// must not touch, removed when the test ends.
func createForeign(t *testing.T, name string, labels map[string]string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	labels[labelRun] = runID
	resp, err := cli().ContainerCreate(ctx, &container.Config{
		Image: testImage, Cmd: []string{"sleep"}, Labels: labels,
	}, &container.HostConfig{}, nil, nil, name)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = dk.RemoveContainer(ctx, resp.ID)
	})
	if err := cli().ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	return resp.ID
}

// 6. Containers without berth's labels, or of another node, are never
// touched, even with berth-like names and the same pod labels.
func TestUnmanagedContainersUntouched(t *testing.T) {
	need(t)
	node := "e2e-" + runID + "-" + randHex(3)
	tag := randHex(4)
	foreign := map[string]string{}
	foreign["plain-before"] = createForeign(t, "berth_web_victim_default_"+tag+"_0", map[string]string{})
	foreign["other-node"] = createForeign(t, "berth_side_victim_default_"+tag+"_0", map[string]string{
		runtime.LabelManaged:       "true",
		runtime.LabelNode:          node + "-other",
		runtime.LabelPodNamespace:  "default",
		runtime.LabelPodName:       "victim",
		runtime.LabelPodUID:        "00000000-0000-0000-0000-000000000000",
		runtime.LabelContainerName: "web",
		runtime.LabelContainerHash: "deadbeef",
		runtime.LabelSource:        "file",
		runtime.LabelRestartCount:  "0",
		runtime.LabelAttempt:       "0",
	})

	b := startBerth(t, Options{Node: node})
	runWebPod(t, b, "victim", 0, "x")
	foreign["plain-during"] = createForeign(t, "berth_POD_victim_default_"+tag+"_0", map[string]string{
		"io.berth.note": "not managed", // a berth-like label, but not io.berth.managed
	})
	runWebPod(t, b, "other", 0, "x")
	removeFile(t, b.Pods, "victim.yaml")
	removeFile(t, b.Pods, "other.yaml")
	waitPodGone(t, b.Node, "victim")
	waitPodGone(t, b.Node, "other")
	// Let a resync tick (5 s) pass after the deletions.
	time.Sleep(5500 * time.Millisecond)

	for what, id := range foreign {
		c := inspect(t, id)
		if !c.State.Running {
			t.Errorf("%s container %s (%s) is %s, want running untouched", what, id[:12], c.Name, c.State.Status)
		}
		if c.RestartCount != 0 {
			t.Errorf("%s container %s was restarted", what, id[:12])
		}
	}
}

// 7. After kill -9 and a restart, running containers are adopted; a
// container removed while berth was down is recreated alone.
func TestAdoptionAfterCrash(t *testing.T) {
	b := startBerth(t, Options{})
	hp := freePort(t)
	ids := runWebPod(t, b, "adopt", hp, "x")
	waitPodStatus(t, b, "adopt", "Running", allRunning(ids))

	// Graceful stop: the pod keeps running while berth is down, and is
	// adopted as it is.
	b.Stop(t)
	assertStable(t, b.Node, "adopt", ids, time.Second)
	b.Start(t)
	waitPodStatus(t, b, "adopt", "Running after a graceful restart", allRunning(ids))
	assertStable(t, b.Node, "adopt", ids, 2*time.Second)

	b.Kill(t)
	b.Start(t)
	waitPodStatus(t, b, "adopt", "Running after kill -9 and restart", allRunning(ids))
	assertStable(t, b.Node, "adopt", ids, 3*time.Second)
	if n := len(listContainers(t, map[string]string{runtime.LabelNode: b.Node})); n != 3 {
		t.Fatalf("node has %d containers after adoption, want 3", n)
	}

	t.Run("removed while down", func(t *testing.T) {
		b.Kill(t)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cli().ContainerRemove(ctx, ids["side"], container.RemoveOptions{Force: true}); err != nil {
			t.Fatal(err)
		}
		b.Start(t)
		var after map[string]string
		waitFor(t, waitLong, "side recreated", func() (bool, string) {
			list := podContainers(t, b.Node, "adopt")
			got, ok := exactlyOne(list, []string{"POD", "web", "side"})
			after = got
			return ok && got["side"] != ids["side"], describe(list)
		})
		if after["web"] != ids["web"] || after["POD"] != ids["POD"] {
			t.Fatalf("restart replaced more than side: before %v, after %v", ids, after)
		}
		assertStable(t, b.Node, "adopt", after, 2*time.Second)
		httpWant(t, getURL(hp, "http://127.0.0.1:8081/env?name=PORT"), "8081")
	})

	t.Run("manifest deleted while down", func(t *testing.T) {
		b.Kill(t)
		removeFile(t, b.Pods, "adopt.yaml")
		b.Start(t)
		waitPodGone(t, b.Node, "adopt")
	})
}

// 8. A container killed behind berth's back is replaced by a new one with
// the restart count incremented.
func TestKilledContainerRestarted(t *testing.T) {
	b := startBerth(t, Options{})
	hp := freePort(t)
	ids := runWebPod(t, b, "crash", hp, "x")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cli().ContainerKill(ctx, ids["web"], "SIGKILL"); err != nil {
		t.Fatal(err)
	}
	var after map[string]string
	waitFor(t, waitLong, "web restarted", func() (bool, string) {
		list := podContainers(t, b.Node, "crash")
		got, ok := exactlyOne(list, []string{"POD", "web", "side"})
		after = got
		return ok && got["web"] != ids["web"], describe(list)
	})
	if after["side"] != ids["side"] || after["POD"] != ids["POD"] {
		t.Fatalf("restart of web replaced more: before %v, after %v", ids, after)
	}
	c := inspect(t, after["web"])
	if got := c.Config.Labels[runtime.LabelRestartCount]; got != "1" {
		t.Errorf("restarted web: label %s = %q, want 1", runtime.LabelRestartCount, got)
	}
	httpWant(t, fmt.Sprintf("http://127.0.0.1:%d/", hp), "hello-e2e")
	waitPodStatus(t, b, "crash", "restartCount 1", func(p *v1.Pod) (bool, string) {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == "web" {
				return cs.RestartCount == 1 && cs.State.Running != nil, fmt.Sprintf("%+v", cs)
			}
		}
		return false, "no web status"
	})
	// The killed instance is kept (exited) as "previous", and only that one.
	exited := 0
	for _, ct := range podContainers(t, b.Node, "crash") {
		if ct.Labels[runtime.LabelContainerName] == "web" && ct.State != "running" {
			exited++
		}
	}
	if exited > 1 {
		t.Errorf("%d exited web instances kept, want at most 1", exited)
	}

	t.Run("sandbox killed", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cli().ContainerKill(ctx, after["POD"], "SIGKILL"); err != nil {
			t.Fatal(err)
		}
		// A new sandbox, and every app container recreated inside it.
		var again map[string]string
		waitFor(t, waitLong, "pod recreated in a new sandbox", func() (bool, string) {
			list := podContainers(t, b.Node, "crash")
			got, ok := exactlyOne(list, []string{"POD", "web", "side"})
			again = got
			return ok && got["POD"] != after["POD"] && got["web"] != after["web"] && got["side"] != after["side"], describe(list)
		})
		for _, n := range []string{"web", "side"} {
			if nm := inspect(t, again[n]).HostConfig.NetworkMode; string(nm) != "container:"+again["POD"] {
				t.Errorf("%s: network mode %s, want the new sandbox %s", n, nm, again["POD"][:12])
			}
		}
		httpWant(t, fmt.Sprintf("http://127.0.0.1:%d/", hp), "hello-e2e")
		httpWant(t, getURL(hp, "http://127.0.0.1:8081/env?name=PORT"), "8081")
	})
}

// 9. The metrics of the design are exposed.
func TestMetrics(t *testing.T) {
	b := startBerth(t, Options{})
	ids := runWebPod(t, b, "metrics", 0, "x")
	waitPodStatus(t, b, "metrics", "Running", allRunning(ids))

	checks := []struct {
		series string
		min    float64
	}{
		{`workqueue_adds_total{name="pods"}`, 1},
		{`berth_reconcile_total{result="success"}`, 1},
		{`berth_pod_start_duration_seconds_count`, 1},
		{`berth_pods{phase="Running"}`, 1},
		{`berth_source_updates_total{source="file"}`, 1},
		{`berth_docker_events_total{action="start"}`, 3},
		{`berth_containers{state="running"}`, 3},
	}
	var text string
	waitFor(t, 20*time.Second, "metrics", func() (bool, string) {
		m, err := b.Metrics()
		if err != nil {
			return false, err.Error()
		}
		text = m
		var missing []string
		for _, c := range checks {
			if v, ok := metricValue(m, c.series); !ok || v < c.min {
				missing = append(missing, c.series+" >= "+strconv.FormatFloat(c.min, 'g', -1, 64))
			}
		}
		return len(missing) == 0, strings.Join(missing, ", ")
	})
	for _, name := range []string{"berth_reconcile_duration_seconds_bucket", "workqueue_depth{name=\"pods\"}", "go_goroutines", "process_cpu_seconds_total"} {
		if !strings.Contains(text, name) {
			t.Errorf("metrics lack %s", name)
		}
	}
	if v, _ := metricValue(text, `berth_pods{phase="Running"}`); v != 1 {
		t.Errorf(`berth_pods{phase="Running"} = %v, want 1`, v)
	}
}
