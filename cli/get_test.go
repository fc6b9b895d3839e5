package cli

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/model"
)

// allNodeRows prints pods as get pods --all-nodes does (out "" or
// "wide", every namespace) and returns the header and the rows by NAME.
func allNodeRows(t *testing.T, out string, now time.Time, pods ...v1.Pod) ([]string, map[string][]string) {
	t.Helper()
	var buf, errBuf bytes.Buffer
	if err := printAllNodePods(&buf, &errBuf, &v1.PodList{Items: pods}, outputFormat{kind: out}, getQuery{allNS: true}, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	split := regexp.MustCompile(`\s{2,}`).Split
	header, rows := split(lines[0], -1), map[string][]string{}
	for _, l := range lines[1:] {
		f := split(l, -1)
		rows[f[slices.Index(header, "NAME")]] = f
	}
	return header, rows
}

// get pods --all-nodes prints the API's pod Table (kubeapi.PodTable) with
// NODE first: kubectl's columns, RESTARTS with the last restart's age,
// AGE <unknown> for a pod known only by its status, whose READY counts
// its statuses' containers.
func TestPrintAllNodePods(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	web := v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", CreationTimestamp: metav1.Time{Time: now.Add(-3 * time.Minute)},
			Annotations: map[string]string{"berth.io/source": "file", "berth.io/origin": "/etc/berth/pods/web.yaml"}},
		Spec: v1.PodSpec{NodeName: "n1", Containers: []v1.Container{{Name: "a"}, {Name: "b"}}},
		Status: v1.PodStatus{Phase: v1.PodRunning, PodIP: "10.0.0.5", ContainerStatuses: []v1.ContainerStatus{
			{Name: "a", Ready: true, RestartCount: 2, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
				LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{FinishedAt: metav1.Time{Time: now.Add(-62 * time.Second)}}}},
			{Name: "b", RestartCount: 1, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}},
		}},
	}
	statusOnly := v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "fromfile", Namespace: "kube-system"}, Spec: v1.PodSpec{NodeName: "n2"},
		Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{
			{Name: "app", Ready: true, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}}}

	h, rows := allNodeRows(t, "wide", now, web, statusOnly)
	if got := strings.Join(h, ","); got != "NODE,NAMESPACE,NAME,READY,STATUS,RESTARTS,AGE,IP,NOMINATED NODE,READINESS GATES,SOURCE,ORIGIN" {
		t.Fatalf("wide header %s", got)
	}
	if got, want := strings.Join(rows["web"], ","), "n1,default,web,1/2,CrashLoopBackOff,3 (62s ago),3m,10.0.0.5,<none>,<none>,file,/etc/berth/pods/web.yaml"; got != want {
		t.Errorf("wide web row\n%s, want\n%s", got, want)
	}
	h, rows = allNodeRows(t, "", now, web, statusOnly)
	if got := strings.Join(h, ","); got != "NODE,NAMESPACE,NAME,READY,STATUS,RESTARTS,AGE" {
		t.Fatalf("header %s", got)
	}
	if got, want := strings.Join(rows["fromfile"], ","), "n2,kube-system,fromfile,1/1,Running,0,<unknown>"; got != want {
		t.Errorf("a pod known by its status: %s, want %s", got, want)
	}
}

// As kubectl: a started sidecar counts in READY (and its restarts in
// RESTARTS) and does not hold the STATUS at Init.
func TestAllNodePodsCountSidecars(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	always := v1.ContainerRestartPolicyAlways
	yes, no := true, false
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{}}
	pod := func(name string, init ...v1.ContainerStatus) *v1.Pod {
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "proxy", RestartPolicy: &always}, {Name: "setup"}},
				Containers: []v1.Container{{Name: "app"}}},
			Status: v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: init,
				ContainerStatuses: []v1.ContainerStatus{{Name: "app", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "PodInitializing"}}}}},
		}
	}
	initializing := pod("initializing", v1.ContainerStatus{Name: "proxy", Started: &yes, Ready: true, RestartCount: 1, State: running},
		v1.ContainerStatus{Name: "setup", Started: &yes, State: running})
	notStarted := pod("notstarted", v1.ContainerStatus{Name: "proxy", Started: &no, State: running}, v1.ContainerStatus{Name: "setup"})
	up := pod("up", v1.ContainerStatus{Name: "proxy", Started: &yes, Ready: true, RestartCount: 2, State: running},
		v1.ContainerStatus{Name: "setup", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: "Completed"}}})
	up.Status.Phase = v1.PodRunning
	up.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app", Ready: true, RestartCount: 1, State: running}}
	_, rows := allNodeRows(t, "", now, *initializing, *notStarted, *up)
	for name, want := range map[string]string{"initializing": "1/2 Init:1/2 1", "notstarted": "0/2 Init:0/2 0", "up": "2/2 Running 3"} {
		if got := strings.Join(rows[name][3:6], " "); got != want {
			t.Errorf("%s: READY STATUS RESTARTS %s, want %s", name, got, want)
		}
	}
}

// berth get pods takes kubectl's names, flags and formats, and prints the
// server's Table columns.
func TestGetPodsLikeKubectl(t *testing.T) {
	isolate(t)
	a := newCLIAPI(t)
	now := a.clock.Now()
	a.addPodWith(t, "default", "web", func(p *model.Pod) {
		p.Spec.Labels = map[string]string{"app": "web"}
		p.Spec.Spec.ActiveDeadlineSeconds = new(int64(2_000_000))
		p.Status.PodIP, p.Status.PodIPs = "10.0.0.5", []v1.PodIP{{IP: "10.0.0.5"}}
		cs := &p.Status.ContainerStatuses[0]
		cs.RestartCount = 1
		cs.LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.Time{Time: now.Add(-62 * time.Second)}}
	}, "app")
	a.addPodWith(t, "default", "db", func(p *model.Pod) { p.Spec.Labels = map[string]string{"app": "db"} }, "app")
	a.addPod(t, "other", "cache", "app")
	get := func(args ...string) (string, string, error) {
		t.Helper()
		return runCLI(t, append(append([]string{"get"}, args...), a.flags()...)...)
	}
	table := func(out string) (header []string, rows map[string][]string) {
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		rows = map[string][]string{}
		header = regexp.MustCompile(`\s{2,}`).Split(lines[0], -1)
		for _, l := range lines[1:] {
			f := regexp.MustCompile(`\s{2,}`).Split(l, -1)
			rows[f[slices.Index(header, "NAME")]] = f
		}
		return header, rows
	}

	out, _, err := get("pods")
	h, rows := table(out)
	if err != nil || strings.Join(h, ",") != "NAMESPACE,NAME,READY,STATUS,RESTARTS,AGE" || len(rows) != 3 {
		t.Fatalf("get pods: %v\n%s", err, out)
	}
	if r := rows["web"]; r[0] != "default" || r[2] != "1/1" || r[3] != "Running" || r[4] != "1 (62s ago)" {
		t.Errorf("web row %q, want default web 1/1 Running '1 (62s ago)'", r)
	}

	for _, args := range [][]string{{"po", "-n", "default"}, {"pod", "--namespace", "default"}} {
		out, _, err := get(args...)
		if h, rows := table(out); err != nil || strings.Join(h, ",") != "NAME,READY,STATUS,RESTARTS,AGE" || len(rows) != 2 || rows["cache"] != nil {
			t.Errorf("get %v: %v\n%s", args, err, out)
		}
	}
	if out, _, err := get("pods", "-A"); err != nil || !strings.HasPrefix(out, "NAMESPACE") || !strings.Contains(out, "cache") {
		t.Errorf("get pods -A: %v\n%s", err, out)
	}

	out, _, err = get("pods", "-n", "default", "-o", "wide")
	h, rows = table(out)
	if err != nil || strings.Join(h, ",") != "NAME,READY,STATUS,RESTARTS,AGE,IP,NODE,NOMINATED NODE,READINESS GATES,SOURCE,ORIGIN" {
		t.Fatalf("get pods -o wide: %v\n%s", err, out)
	}
	if r := rows["web"]; r[5] != "10.0.0.5" || r[6] != "node-1" || r[9] != "file" || r[10] != "/p/web.yaml" {
		t.Errorf("wide web row %q", r)
	}

	for _, tc := range []struct {
		args []string
		out  string
	}{
		{[]string{"pods", "web", "db", "-o", "name"}, "pod/web\npod/db\n"},
		{[]string{"pod/web", "po/db", "-o", "name"}, "pod/web\npod/db\n"},
		{[]string{"pods", "cache", "-n", "other", "-o", "name"}, "pod/cache\n"},
		{[]string{"pods", "-l", "app=web", "-o", "name"}, "pod/web\n"},
		{[]string{"pods", "-l", "app!=web", "-n", "default", "-o", "name"}, "pod/db\n"},
		{[]string{"pods", "web", "-o", "jsonpath={.status.podIP}"}, "10.0.0.5"},
		{[]string{"pods", "web", "-o", "jsonpath={.spec.activeDeadlineSeconds}"}, "2000000"},
		{[]string{"pods", "-n", "default", "-l", "app", "-o", "jsonpath={range .items[*]}{.metadata.name} {end}"}, "db web "},
	} {
		out, errOut, err := get(tc.args...)
		if err != nil || out != tc.out {
			t.Errorf("get %s: %q (%v %q), want %q", strings.Join(tc.args, " "), out, err, errOut, tc.out)
		}
	}
	out, _, err = get("pod", "web", "-o", "json")
	var p v1.Pod
	if err != nil || json.Unmarshal([]byte(out), &p) != nil || p.Kind != "Pod" || p.Name != "web" || p.Spec.NodeName != "node-1" {
		t.Errorf("get pod web -o json: %v\n%s", err, out)
	}

	if _, _, err := get("pods", "nope"); err == nil || err.Error() != `Error from server (NotFound): pods "nope" not found` {
		t.Errorf("get pods nope: %v", err)
	}
	out, errOut, err := get("pods", "web", "nope", "-o", "name")
	if err == nil || out != "pod/web\n" || !strings.Contains(errOut, `Error from server (NotFound): pods "nope" not found`) {
		t.Errorf("get pods web nope: %v %q %q", err, out, errOut)
	}
	if out, errOut, err := get("pods", "-n", "empty"); err != nil || out != "" || errOut != "No resources found in empty namespace.\n" {
		t.Errorf("get pods -n empty: %v %q %q", err, out, errOut)
	}
	for _, bad := range [][]string{{"podz"}, {"svc/web"}, {"pods", "-o", "xml"}, {"pods", "-o", "jsonpath="}, {"pods", "-o", "jsonpath={.items[}"}} {
		if _, _, err := get(bad...); err == nil {
			t.Errorf("get %v: no error", bad)
		}
	}
}
