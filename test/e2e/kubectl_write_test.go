package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
)

// appliedPod is the pod kubectl applies: image img, label rev.
func appliedPod(img, rev string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: applied
  labels: {app: applied, rev: %s}
spec:
  terminationGracePeriodSeconds: 2
  containers:
    - name: main
      image: %s
      args: [serve]
      env: [{name: PORT, value: "8080"}]
`, rev, img)
}

// TestKubectlApply runs kubectl apply, delete and their refusals against
// a berth with the push source on (the API writes through it).
func TestKubectlApply(t *testing.T) {
	k := startKubectlEnv(t, "BERTH_SOURCES_PUSH_ENABLED=true")
	node := k.b.Node
	dir, manifest := manifestDir(t)
	// A second tag of the test image: an image change kubectl may apply
	// to a running pod (the API refuses most other spec changes).
	tag := "berth/testapp:kubectl-" + runID
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cli().ImageTag(ctx, testImage, tag); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, _ = cli().ImageRemove(ctx, tag, image.RemoveOptions{})
	})

	t.Run("apply, apply a change, delete", func(t *testing.T) {
		r := k.ok(t, "apply", "-f", manifest("applied.yaml", appliedPod(testImage, "one")))
		if r.stdout != "pod/applied created\n" || r.stderr != "" {
			t.Errorf("first apply (with validation): %s", r)
		}
		first := waitPodRunning(t, node, "applied", "main")
		k.waitReady(t, "default", "applied")

		r = k.ok(t, "apply", "-f", manifest("applied.yaml", appliedPod(tag, "two")))
		if r.stdout != "pod/applied configured\n" || r.stderr != "" {
			t.Errorf("second apply: %s", r)
		}
		waitFor(t, waitLong, "main recreated from "+tag, func() (bool, string) {
			list := podContainers(t, node, "applied")
			ids, ok := exactlyOne(list, []string{"POD", "main"})
			if !ok || ids["main"] == first["main"] {
				return false, describe(list)
			}
			img := inspect(t, ids["main"]).Config.Image
			return img == tag, "image " + img
		})
		want := tag + " two"
		k.eventually(t, "the applied change in the API", func(r kubectlRun) bool { return r.stdout == want },
			"get", "pod", "applied", "-o", "jsonpath={.spec.containers[0].image} {.metadata.labels.rev}")
		if r := k.ok(t, "apply", "-f", filepath.Join(dir, "applied.yaml")); r.stdout != "pod/applied unchanged\n" {
			t.Errorf("third apply, no change: %s", r)
		}

		r = k.run(t, "", "create", "-f", filepath.Join(dir, "applied.yaml"))
		if r.code != 1 || !strings.HasPrefix(r.stderr, "Error from server (AlreadyExists): ") || !strings.Contains(r.stderr, `pods "applied" already exists`) {
			t.Errorf("create of an existing pod: %s", r)
		}
		if r := k.ok(t, "label", "pod", "applied", "extra=yes"); r.stdout != "pod/applied labeled\n" {
			t.Errorf("label: %s", r)
		}
		k.eventually(t, "the new label", func(r kubectlRun) bool { return r.stdout == "yes" },
			"get", "pod", "applied", "-o", "jsonpath={.metadata.labels.extra}")

		r = k.ok(t, "delete", "pod", "applied")
		if r.stdout != `pod "applied" deleted from default namespace`+"\n" {
			t.Errorf("delete: %s", r)
		}
		waitPodGone(t, node, "applied")
		if r := k.run(t, "", "get", "pod", "applied"); r.code != 1 || !strings.Contains(r.stderr, "(NotFound)") {
			t.Errorf("after delete: %s", r)
		}
	})
	t.Run("apply an invalid manifest", func(t *testing.T) {
		r := k.run(t, "", "apply", "-f", manifest("noimage.yaml",
			"apiVersion: v1\nkind: Pod\nmetadata: {name: noimage}\nspec:\n  containers:\n    - name: main\n"))
		if r.code != 1 || !strings.Contains(r.stderr, "spec.containers[0].image") || !strings.Contains(r.stderr, "noimage") {
			t.Errorf("want an error naming the pod and spec.containers[0].image: %s", r)
		}
		t.Logf("missing image: %s", strings.TrimSpace(r.stderr))
		r = k.run(t, "", "apply", "-f", manifest("typo.yaml",
			"apiVersion: v1\nkind: Pod\nmetadata: {name: typo}\nspec:\n  containers:\n    - name: main\n      image: "+testImage+"\n      imagee: x\n"))
		if r.code != 1 || !strings.Contains(r.stderr, `unknown field "`) || !strings.Contains(r.stderr, "imagee") {
			t.Errorf("want an unknown field error naming imagee: %s", r)
		}
		t.Logf("unknown field: %s", strings.TrimSpace(r.stderr))
		for _, name := range []string{"noimage", "typo"} {
			if r := k.run(t, "", "get", "pod", name); r.code != 1 {
				t.Errorf("the invalid pod %s exists: %s", name, r)
			}
		}
	})
	t.Run("delete a file pod", func(t *testing.T) {
		writeFile(t, k.b.Pods, "filepod.yaml", podYAML("filepod", Ctr{Name: "main", Args: []string{"sleep"}}))
		ids := waitPodRunning(t, node, "filepod", "main")
		k.waitReady(t, "default", "filepod")
		r := k.run(t, "", "delete", "pod", "filepod", "--wait=false")
		if r.code != 1 || !strings.HasPrefix(r.stderr, "Error from server (") || !strings.Contains(r.stderr, "file") {
			t.Errorf("want a refusal naming the file source: %s", r)
		}
		t.Logf("delete of a file pod: %s", strings.TrimSpace(r.stderr))
		r = k.run(t, "", "label", "pod", "filepod", "x=y")
		if r.code != 1 || !strings.HasPrefix(r.stderr, "Error from server (") || !strings.Contains(r.stderr, "file") {
			t.Errorf("want a refusal of the label naming the file source: %s", r)
		}
		assertStable(t, node, "filepod", ids, time.Second)
	})
}
