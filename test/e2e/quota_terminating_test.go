package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestTerminatingPodKeepsItsQuota: a deleted push pod keeps its place in
// the pods quota while it still stops, as a ResourceQuota counts a
// terminating pod. With pods=1, a pod whose preStop hook outlasts any
// wait (grace period 1e9 s) is deleted; the next create is refused 403
// naming the quota while it terminates, and passes once it is gone (the
// test kills its container). Without this, create and delete in a loop
// ran any number of pods.
func TestTerminatingPodKeepsItsQuota(t *testing.T) {
	pushFile, _ := writeToken(t, "push")
	k := startKubectlEnv(t, "BERTH_SOURCES_PUSH_ENABLED=true", "BERTH_SOURCES_PUSH_TOKEN_FILE="+pushFile,
		"BERTH_SOURCES_PUSH_QUOTA_PODS=1")
	push := k.writeKubeconfig(t, pushFile)
	stubborn := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: stubborn}
spec:
  terminationGracePeriodSeconds: 1000000000
  containers:
  - name: app
    image: %q
    args: [sleep]
    lifecycle:
      preStop: {exec: {command: [/testapp, exit, "0", 1000000s]}}
`, testImage)
	if r := k.runWith(t, push, stubborn, "create", "-f", "-"); r.code != 0 {
		t.Fatalf("create: %s", r)
	}
	ids := waitPodRunning(t, k.b.Node, "stubborn", "app")
	if r := k.runWith(t, push, "", "delete", "pod", "stubborn", "--wait=false"); r.code != 0 {
		t.Fatalf("delete: %s", r)
	}
	next := func() kubectlRun {
		return k.runWith(t, push, "", "run", "next", "--image="+testImage, "--restart=Never", "--", "sleep")
	}
	over := `pods "next" is forbidden: exceeded quota: push, requested: pods=1, used: pods=1, limited: pods=1`
	for i := 0; i < 2; i++ { // at once, and after the stop has surely begun
		if r := next(); r.code != 1 || !strings.Contains(r.stderr, over) {
			t.Fatalf("create while stubborn terminates: %s\nwant stderr containing %q", r, over)
		}
		if run := running(podContainers(t, k.b.Node, "stubborn")); len(run["app"]) != 1 {
			t.Fatalf("stubborn no longer terminating (%v): the refusal proves nothing", run)
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("refused while stubborn terminates: %s", over)

	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	if err := cli().ContainerKill(ctx, ids["app"], "SIGKILL"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, waitLong, "stubborn's containers stopped", func() (bool, string) {
		list := podContainers(t, k.b.Node, "stubborn")
		return len(running(list)) == 0, describe(list)
	})
	var r kubectlRun
	waitFor(t, waitLong, "next created once stubborn is gone", func() (bool, string) {
		r = next()
		return r.code == 0, r.String()
	})
	waitPodRunning(t, k.b.Node, "next", "next")
}
