package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/config"
)

func TestRunRefusesOpenAddressWithoutToken(t *testing.T) {
	cfg := &config.Config{ServerAddress: "0.0.0.0", RootDir: t.TempDir(), LogLevel: "error", LogFormat: "text"}
	err := run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "server.token_file") {
		t.Fatalf("run on 0.0.0.0 without a token: %v", err)
	}
}

func TestPrintPodsTable(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	list := &v1.PodList{Items: []v1.Pod{{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", CreationTimestamp: metav1.Time{Time: now.Add(-3 * time.Minute)},
			Annotations: map[string]string{"berth.io/source": "file", "berth.io/origin": "/etc/berth/pods/web.yaml"}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a"}, {Name: "b"}}},
		Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{
			{Name: "a", Ready: true, RestartCount: 2, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}},
			{Name: "b", RestartCount: 1, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}},
		}},
	}}}
	var out bytes.Buffer
	if err := printPods(&out, list, "wide", false, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "NAMESPACE") {
		t.Fatalf("table:\n%s", out.String())
	}
	for _, want := range []string{"web", "1/2", "CrashLoopBackOff", "3", "3m", "file", "/etc/berth/pods/web.yaml"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("row %q lacks %q", lines[1], want)
		}
	}
	if err := printPods(&out, list, "xml", false, now); err == nil {
		t.Error("unknown output format accepted")
	}
}

func TestValidateCommand(t *testing.T) {
	dir := t.TempDir()
	good := dir + "/good.yaml"
	bad := dir + "/bad.yaml"
	mustWrite(t, good, "apiVersion: v1\nkind: Pod\nmetadata: {name: good}\nspec:\n  containers: [{name: a, image: 'img:1'}]\n")
	mustWrite(t, bad, "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec:\n  containers: [{name: a}]\n")
	run := func(args ...string) (string, string, error) {
		cmd := validateCmd()
		var out, errOut bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		cmd.SetArgs(args)
		err := cmd.Execute()
		return out.String(), errOut.String(), err
	}
	if out, _, err := run(good); err != nil || !strings.Contains(out, "1 pod(s) valid") {
		t.Fatalf("good: %q %v", out, err)
	}
	_, errOut, err := run(dir)
	if err == nil || !strings.Contains(errOut, bad+": default/bad: spec.containers[0].image: Required value") {
		t.Fatalf("bad: %q %v", errOut, err)
	}

	// The levels of the sources, through the same checks.
	priv := dir + "/priv/p.yaml"
	if err := os.MkdirAll(dir+"/priv", 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, priv, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: 'img:1', ports: [{containerPort: 80, hostPort: 8080}], securityContext: {privileged: true}}]\n")
	if _, errOut, err := run(priv); err != nil {
		t.Errorf("privileged pod at the file source's level: %q %v", errOut, err)
	}
	for _, args := range [][]string{{"--network-source", priv}, {"--pod-security", "baseline", priv}} {
		if _, errOut, err := run(args...); err == nil || !strings.Contains(errOut, `spec.containers[0].securityContext.privileged: Forbidden: violates PodSecurity "baseline"`) {
			t.Errorf("%v: %q %v", args, errOut, err)
		}
	}
	if _, errOut, err := run("--pod-security", "restricted", good); err == nil || !strings.Contains(errOut, `spec.containers[0].securityContext.runAsNonRoot: Forbidden: violates PodSecurity "restricted"`) {
		t.Errorf("restricted: %q %v", errOut, err)
	}
	mustWrite(t, priv, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: 'img:1', ports: [{containerPort: 80, hostPort: 8080}]}]\n")
	if _, errOut, err := run("--network-source", "--host-ports", "30000-32767", priv); err == nil || !strings.Contains(errOut, "8080 is outside the source's host_ports 30000-32767") {
		t.Errorf("host ports: %q %v", errOut, err)
	}
	if _, _, err := run("--pod-security", "lax", good); err == nil || !strings.Contains(err.Error(), "--pod-security") {
		t.Errorf("bad level: %v", err)
	}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
