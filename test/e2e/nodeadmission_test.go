package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// nodePod is a one-container sleeper pod with spec lines (indented two
// spaces) before its containers and container lines (six) after its args.
func nodePod(name, spec, ctr string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  terminationGracePeriodSeconds: 2\n%s"+
		"  containers:\n    - name: app\n      image: %q\n      args: [\"sleep\"]\n%s", name, spec, testImage, ctr)
}

// TestNodeAdmission: berth started with node_labels admits pods as the
// kubelet does. A pod whose nodeSelector and required node affinity match
// the labels runs; one selecting a missing label is refused with the
// kubelet's NodeAffinity reason, one requesting more cpu than the node has
// with OutOfcpu, and neither gets a container or a /pods entry; a running
// pod's edit that no longer fits is refused and the pod keeps running; a
// nodeName naming another node only warns; the node object in etcd carries
// the labels.
func TestNodeAdmission(t *testing.T) {
	e := startEtcd(t)
	b := startBerth(t, Options{Env: append(clusterEnv(e.ClientURL), "BERTH_NODE_LABELS=disk=ssd,e2e.berth.dev/tier=gold")})

	fits := "  nodeSelector:\n    disk: ssd\n" +
		"  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n" +
		"          - matchExpressions: [{key: e2e.berth.dev/tier, operator: In, values: [silver, gold]}]\n" +
		"          - matchExpressions: [{key: never, operator: Exists}]\n"
	writeFile(t, b.Pods, "fits.yaml", nodePod("fits", fits, "      resources: {requests: {cpu: 100m}}\n"))
	ids := waitPodRunning(t, b.Node, "fits", "app")

	writeFile(t, b.Pods, "picky.yaml", nodePod("picky", "  nodeSelector:\n    gpu: \"true\"\n", ""))
	logLine(t, b, "manifest rejected", "picky.yaml: default/picky: NodeAffinity: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector")

	capacity := goruntime.NumCPU() * 1000 // cAdvisor is off in these tests: the node's cores
	writeFile(t, b.Pods, "greedy.yaml", nodePod("greedy", "", fmt.Sprintf("      resources: {requests: {cpu: \"%d\"}}\n", capacity/1000)))
	logLine(t, b, "manifest rejected", fmt.Sprintf("greedy.yaml: default/greedy: OutOfcpu: Node didn't have enough resource: cpu, requested: %d, used: 100, capacity: %d",
		capacity, capacity))

	for _, name := range []string{"picky", "greedy"} {
		if p, err := b.Pod(name); err != nil || p != nil {
			t.Errorf("refused pod %s in /pods (err %v)", name, err)
		}
		if list := podContainers(t, b.Node, name); len(list) > 0 {
			t.Errorf("refused pod %s has containers: %s", name, describe(list))
		}
	}

	writeFile(t, b.Pods, "fits.yaml", nodePod("fits", "  nodeSelector:\n    disk: hdd\n", "      resources: {requests: {cpu: 100m}}\n"))
	waitFor(t, waitLong, "the refused edit on fits", func() (bool, string) {
		p, err := b.Pod("fits")
		if err != nil || p == nil {
			return false, fmt.Sprint(err)
		}
		got := p.Annotations["berth.io/rejected-update"]
		return strings.Contains(got, "NodeAffinity: Predicate NodeAffinity failed"), got
	})
	assertStable(t, b.Node, "fits", ids, 2*time.Second)

	writeFile(t, b.Pods, "wander.yaml", nodePod("wander", "  nodeName: elsewhere\n", ""))
	waitPodRunning(t, b.Node, "wander", "app")
	logLine(t, b, `wander.yaml: default/wander: spec.nodeName: \"elsewhere\" is not this node`)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := e.Client().Get(ctx, "/registry/nodes/"+b.Node)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("node key: %v", err)
	}
	var node v1.Node
	if err := json.Unmarshal(resp.Kvs[0].Value, &node); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"disk": "ssd", "e2e.berth.dev/tier": "gold", "kubernetes.io/hostname": b.Node,
		"kubernetes.io/os": goruntime.GOOS, "kubernetes.io/arch": goruntime.GOARCH} {
		if got := node.Labels[k]; got != want {
			t.Errorf("node label %s = %q, want %q (labels %v)", k, got, want, node.Labels)
		}
	}
}
