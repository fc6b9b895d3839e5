package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// probedPodYAML is pod probed: testapp serve on 8080 logging the
// User-Agent of each new client, with an httpGet readiness probe on /ready.
const probedPodYAML = `apiVersion: v1
kind: Pod
metadata:
  name: probed
spec:
  terminationGracePeriodSeconds: 2
  containers:
    - name: app
      image: "` + testImage + `"
      args: ["serve"]
      env:
        - {name: PORT, value: "8080"}
        - {name: LOG_USER_AGENT, value: "1"}
      readinessProbe:
        httpGet: {path: /ready, port: 8080}
        periodSeconds: 1
`

// donePodYAML is pod done: one container that exits 0, never restarted.
const donePodYAML = `apiVersion: v1
kind: Pod
metadata:
  name: done
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
    - name: app
      image: "` + testImage + `"
      args: ["exit", "0"]
`

// TestKubectlPods checks what kubectl shows of pods as a cluster would:
// logs and logs --previous of a container in CrashLoopBackOff and of one
// that ended, the readiness probe's User-Agent, and creationTimestamp
// across a restart of berth. One berth for all, in order: the restart
// comes last.
func TestKubectlPods(t *testing.T) {
	k := startKubectlEnv(t)
	writeFile(t, k.b.Pods, "crashloop.yaml", podYAML("crashloop", Ctr{Name: "app", Args: []string{"exit", "3"}}))
	writeFile(t, k.b.Pods, "probed.yaml", probedPodYAML)
	writeFile(t, k.b.Pods, "done.yaml", donePodYAML)

	t.Run("probe user agent", func(t *testing.T) {
		var ver struct{ Major, Minor string }
		if r := k.ok(t, "get", "--raw", "/version"); json.Unmarshal([]byte(r.stdout), &ver) != nil || ver.Major != "1" || ver.Minor == "" {
			t.Fatalf("/version: %s", r)
		}
		// The first probe's agent, whatever it is: a wrong one fails at once.
		r := k.eventually(t, "the readiness probe reached the app", func(r kubectlRun) bool {
			return strings.Contains(r.stdout, "user-agent /ready: ")
		}, "logs", "probed")
		want := "user-agent /ready: kube-probe/1." + ver.Minor + "\n"
		if !strings.Contains(r.stdout, want) || strings.Count(r.stdout, "user-agent /ready: ") != 1 {
			t.Errorf("the probe's User-Agent: want the line %q: %s", want, r)
		}
	})

	t.Run("logs in CrashLoopBackOff", func(t *testing.T) {
		// Read while the status stays the same: CrashLoopBackOff, the
		// last run's instance in lastState.
		var last *v1.ContainerStateTerminated
		var prev, cur kubectlRun
		waitFor(t, waitLong, "logs and logs -p of the crashed run, in CrashLoopBackOff", func() (bool, string) {
			before := crashStatus(t, k)
			if w := before.State.Waiting; w == nil || w.Reason != "CrashLoopBackOff" || before.LastTerminationState.Terminated == nil {
				return false, fmt.Sprintf("status %+v", before)
			}
			prev = k.run(t, "", "logs", "crashloop", "--previous", "--timestamps")
			cur = k.run(t, "", "logs", "crashloop", "--timestamps")
			after := crashStatus(t, k)
			last = before.LastTerminationState.Terminated
			same := after.LastTerminationState.Terminated != nil && after.LastTerminationState.Terminated.ContainerID == last.ContainerID
			return same && after.State.Waiting != nil, fmt.Sprintf("the status changed meanwhile: %+v\n%s\n%s", after, prev, cur)
		})
		if prev.code != 0 || cur.code != 0 {
			t.Fatalf("want the crashed run's log from both (as the kubelet, from lastState):\n%s\n%s", prev, cur)
		}
		if prev.stdout != cur.stdout || !strings.Contains(prev.stdout, " testapp exit starting\n") {
			t.Errorf("logs -p and logs differ, or lack the run's banner:\n%s\n%s", prev, cur)
		}
		// The lines are the crashed run's: stamped within its run.
		stamp, _, _ := strings.Cut(prev.stdout, " ")
		at, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil || at.Before(last.StartedAt.Add(-time.Second)) || at.After(last.FinishedAt.Add(time.Second)) {
			t.Errorf("the first line, at %v (%v), is not of the run %v–%v of %s", at, err, last.StartedAt, last.FinishedAt, last.ContainerID)
		}
	})

	t.Run("logs of a terminated container", func(t *testing.T) {
		k.eventually(t, "done Succeeded", func(r kubectlRun) bool { return r.stdout == "Succeeded" },
			"get", "pod", "done", "-o", "jsonpath={.status.phase}")
		if r := k.ok(t, "logs", "done"); !strings.Contains(r.stdout, "testapp exit starting\n") {
			t.Errorf("want the run's log: %s", r)
		}
		if r := k.run(t, "", "logs", "done", "--previous"); r.code != 1 || !strings.Contains(r.stderr, `previous terminated container "app" in pod "done" not found`) {
			t.Errorf("want kubectl's error for no previous instance: %s", r)
		}
	})

	t.Run("creationTimestamp survives a restart", func(t *testing.T) {
		times := func() map[string]string {
			out := map[string]string{}
			for _, pod := range []string{"probed", "crashloop", "done"} {
				r := k.eventually(t, pod+" served", func(r kubectlRun) bool { return r.stdout != "" }, "get", "pod", pod, "-o",
					"jsonpath={.metadata.creationTimestamp} {.status.startTime}")
				out[pod] = r.stdout
			}
			return out
		}
		before := times()
		// A second at least since the pods were created, so that a
		// timestamp made anew would differ.
		for _, v := range before {
			created, _, _ := strings.Cut(v, " ")
			if at, err := time.Parse(time.RFC3339, created); err != nil {
				t.Fatalf("creationTimestamp %q: %v", created, err)
			} else if d := time.Until(at.Add(1100 * time.Millisecond)); d > 0 {
				time.Sleep(d)
			}
		}
		k.b.Stop(t)
		k.b.Start(t)
		k.kubeconfig = k.writeKubeconfig(t, k.tokenFile)
		// The first version served after the restart already has them.
		if after := times(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("creationTimestamp and startTime after the restart %v, want %v", after, before)
		}
		r := k.ok(t, "get", "pods")
		if row := rowOf(table(r.stdout), 0, "probed"); len(row) != 5 || !ageRE.MatchString(row[4]) {
			t.Errorf("get pods after the restart: %s", r)
		}
	})
}

// crashStatus is the status of container app of pod crashloop, as kubectl
// reads it.
func crashStatus(t *testing.T, k *kubectlEnv) v1.ContainerStatus {
	t.Helper()
	r := k.run(t, "", "get", "pod", "crashloop", "-o", "json")
	var p v1.Pod
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &p) != nil || len(p.Status.ContainerStatuses) != 1 {
		return v1.ContainerStatus{}
	}
	return p.Status.ContainerStatuses[0]
}
