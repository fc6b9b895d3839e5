package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/internal/testutil"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/sources"
)

func execute(cmd *cobra.Command, args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

// TestClusterCommands drives apply, get pods --all-nodes, get nodes and
// delete pod against a real etcd.
func TestClusterCommands(t *testing.T) {
	e := testutil.StartEtcd(t)
	cli := e.Client()
	ep := []string{"--etcd-endpoints", e.ClientURL}
	dir := t.TempDir()
	good, bad := dir+"/web.yaml", dir+"/bad.yaml"
	mustWrite(t, good, "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: a, image: 'img:1', ports: [{containerPort: 80, hostPort: 8080}]}]\n")
	mustWrite(t, bad, "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec:\n  containers: [{name: a}]\n")

	_, errOut, err := execute(applyCmd(), append([]string{"-f", bad, "-f", good, "--node", "n1"}, ep...)...)
	if err == nil || !strings.Contains(errOut, bad+": default/bad: spec.containers[0].image: Required value") {
		t.Fatalf("apply with a bad manifest: %v %q", err, errOut)
	}
	if n := e.Count("/registry/hosts/"); n != 0 {
		t.Fatalf("a failed apply wrote %d keys", n)
	}
	if out, errOut, err := execute(applyCmd(), append([]string{"-f", good, "--node", "n1"}, ep...)...); err != nil || !strings.Contains(out, "pod/web configured on node n1") {
		t.Fatalf("apply: %v %q %q", err, out, errOut)
	}
	// The node's etcd source derives the same pod (and UID) from the key.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "/registry/hosts/n1/pods/default/web")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("applied key: %v %v", resp, err)
	}
	want, _, _, _ := sources.LoadFiles([]string{good}, "etcd", manifest.Options{Node: "n1"})
	got, errs := manifest.Decode("etcd", "/registry/hosts/n1/pods/default/web", resp.Kvs[0].Value, manifest.Options{Node: "n1"})
	if len(errs) != 0 || len(got) != 1 || got[0].Pod.UID != want[0].Pod.UID || got[0].Pod.Spec.Containers[0].Ports[0].HostPort != 8080 {
		t.Fatalf("decoded applied pod: %+v %v", got, errs)
	}

	// n1 reports web Running; n2 is not registered and has a desired pod.
	// As kubectl, READY counts a ready container only when it runs.
	status, _ := json.Marshal(v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{Name: "a", Ready: true,
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}})
	e.Put("/registry/hosts/n1/status/default/web", string(status))
	e.Put("/registry/hosts/n1/status/default/fromfile", string(status))
	e.Put("/registry/hosts/n2/pods/default/lost", "apiVersion: v1\nkind: Pod\nmetadata: {name: lost}\nspec:\n  containers: [{name: a, image: 'img:1'}]\n")
	node, _ := json.Marshal(v1.Node{Status: v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		NodeInfo: v1.NodeSystemInfo{KubeletVersion: "berth/test"}}})
	var n v1.Node
	_ = json.Unmarshal(node, &n)
	n.Name = "n1"
	n.Annotations = map[string]string{"berth.io/pods": "2"}
	node, _ = json.Marshal(n)
	e.Put("/registry/nodes/n1", string(node))

	out, errOut, err := execute(getCmd(), append([]string{"pods", "--all-nodes"}, ep...)...)
	if err != nil {
		t.Fatalf("get pods --all-nodes: %v %s", err, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	wantRows := [][]string{{"NODE", "NAMESPACE", "NAME"}, {"n1", "default", "fromfile", "1/1", "Running"},
		{"n1", "default", "web", "1/1", "Running"}, {"n2", "default", "lost", "0/1", "NodeLost"}}
	if len(lines) != len(wantRows) {
		t.Fatalf("get pods --all-nodes:\n%s", out)
	}
	for i, w := range wantRows {
		if f := strings.Fields(lines[i]); len(f) < len(w) || strings.Join(f[:len(w)], " ") != strings.Join(w, " ") {
			t.Errorf("row %d: %q, want it to start with %q", i, lines[i], w)
		}
	}
	out, _, err = execute(getCmd(), append([]string{"nodes"}, ep...)...)
	if f := strings.Fields(strings.Split(strings.TrimSpace(out), "\n")[len(strings.Split(strings.TrimSpace(out), "\n"))-1]); err != nil ||
		len(f) != 5 || f[0] != "n1" || f[1] != "Ready" || f[2] != "2" || f[3] != "berth/test" {
		t.Fatalf("get nodes: %v\n%s", err, out)
	}
	out, _, err = execute(getCmd(), append([]string{"nodes", "-o", "json"}, ep...)...)
	var list v1.NodeList
	if err != nil || json.Unmarshal([]byte(out), &list) != nil || len(list.Items) != 1 || list.Items[0].Name != "n1" {
		t.Fatalf("get nodes -o json: %v\n%s", err, out)
	}

	if _, _, err := execute(deleteCmd(), append([]string{"pod", "web", "--node", "n1"}, ep...)...); err != nil {
		t.Fatal(err)
	}
	if e.Count("/registry/hosts/n1/pods/") != 0 {
		t.Fatal("delete pod left the key")
	}
	if _, errOut, err := execute(deleteCmd(), append([]string{"pod", "web", "--node", "n1"}, ep...)...); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("deleting a missing pod: %v %q", err, errOut)
	}
}
