package kubeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestListAndGetPods(t *testing.T) {
	f := newFixture(t, Options{})
	f.pod(t, "file", "default", "web", map[string]string{"app": "web"}, running("10.0.0.2"))
	f.pod(t, "push", "default", "job", map[string]string{"app": "job"}, v1.PodStatus{Phase: v1.PodSucceeded})
	f.pod(t, "file", "kube-system", "dns", nil, v1.PodStatus{})
	ctx := context.Background()

	all, err := f.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != 3 || all.ResourceVersion == "" {
		t.Fatalf("all namespaces: %d items, rv %q", len(all.Items), all.ResourceVersion)
	}
	web, err := f.cs.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if web.Spec.NodeName != "node1" || web.UID != "uid-web" || web.ResourceVersion == "" || !web.CreationTimestamp.Time.Equal(t0) {
		t.Fatalf("web: node %q uid %q rv %q created %v", web.Spec.NodeName, web.UID, web.ResourceVersion, web.CreationTimestamp)
	}
	if web.Annotations[SourceAnnotation] != "file" || web.Annotations[ReadOnlyAnnotation] != "true" {
		t.Fatalf("web annotations %v", web.Annotations)
	}
	job, err := f.cs.CoreV1().Pods("default").Get(ctx, "job", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ro := job.Annotations[ReadOnlyAnnotation]; ro {
		t.Fatal("a push pod is annotated read-only")
	}
	// An unchanged pod keeps its resourceVersion.
	again, _ := f.cs.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
	if again.ResourceVersion != web.ResourceVersion {
		t.Fatalf("rv moved without a change: %s then %s", web.ResourceVersion, again.ResourceVersion)
	}

	_, err = f.cs.CoreV1().Pods("default").Get(ctx, "nope", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `pods "nope" not found` {
		t.Fatalf("missing pod: %v", err)
	}
	st, err := f.cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/default/pods/web/status").Do(ctx).Get()
	if err != nil || st.(*v1.Pod).Status.PodIP != "10.0.0.2" {
		t.Fatalf("pods/status: %v %v", st, err)
	}
}

func TestPodSelectors(t *testing.T) {
	f := newFixture(t, Options{})
	f.pod(t, "file", "default", "web", map[string]string{"app": "web", "tier": "front"}, running("10.0.0.2"))
	f.pod(t, "file", "default", "job", map[string]string{"app": "job"}, v1.PodStatus{Phase: v1.PodSucceeded})
	f.pod(t, "file", "other", "db", map[string]string{"app": "db"}, v1.PodStatus{Phase: v1.PodFailed})
	ctx := context.Background()
	names := func(ns string, o metav1.ListOptions) string {
		t.Helper()
		l, err := f.cs.CoreV1().Pods(ns).List(ctx, o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		var out []string
		for _, p := range l.Items {
			out = append(out, p.Name)
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		ns   string
		o    metav1.ListOptions
		want string
	}{
		{"", metav1.ListOptions{LabelSelector: "app in (web,db)"}, "web,db"},
		{"default", metav1.ListOptions{LabelSelector: "tier"}, "web"},
		{"", metav1.ListOptions{LabelSelector: "app!=web"}, "job,db"},
		{"", metav1.ListOptions{FieldSelector: "metadata.name=db"}, "db"},
		{"", metav1.ListOptions{FieldSelector: "metadata.namespace==default"}, "job,web"},
		{"", metav1.ListOptions{FieldSelector: "spec.nodeName=node1,status.phase!=Failed,status.phase!=Succeeded"}, "web"},
		{"", metav1.ListOptions{FieldSelector: "spec.nodeName=other"}, ""},
		{"default", metav1.ListOptions{FieldSelector: "status.phase=Succeeded", LabelSelector: "app=job"}, "job"},
	} {
		if got := names(c.ns, c.o); got != c.want {
			t.Errorf("ns %q %+v: got %q, want %q", c.ns, c.o, got, c.want)
		}
	}
	_, err := f.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.bogus=x"})
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "field label not supported: spec.bogus") {
		t.Fatalf("unsupported field: %v", err)
	}
	_, err = f.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "a in (b"})
	if !apierrors.IsBadRequest(err) {
		t.Fatalf("bad label selector: %v", err)
	}
}

func TestPushScopeSeesPushPods(t *testing.T) {
	f := newFixture(t, Options{})
	f.pod(t, "file", "default", "web", nil, running("10.0.0.2"))
	f.pod(t, "push", "default", "job", nil, v1.PodStatus{})
	cfg := *f.cfg
	cfg.BearerToken = "push"
	cs := newClientset(t, &cfg)
	l, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 || l.Items[0].Name != "job" {
		t.Fatalf("push scope list: %v %v", l, err)
	}
	if _, err := cs.CoreV1().Pods("default").Get(context.Background(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("push scope get of a file pod: %v", err)
	}
}

// getTable GETs path asking for a Table as kubectl does.
func getTable(t *testing.T, f *fixture, path string) metav1.Table {
	t.Helper()
	req, _ := http.NewRequest("GET", f.srv.URL+path, nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var tab metav1.Table
	if err := json.Unmarshal(body, &tab); err != nil || tab.Kind != "Table" {
		t.Fatalf("%s: %s (%v)", path, body, err)
	}
	return tab
}

// rowStrings prints a table's rows as kubectl does (every column).
func rowStrings(tab metav1.Table) []string {
	var out []string
	for _, r := range tab.Rows {
		var cells []string
		for _, c := range r.Cells {
			cells = append(cells, fmt.Sprint(c))
		}
		out = append(out, strings.Join(cells, " | "))
	}
	return out
}

func TestPodTable(t *testing.T) {
	f := newFixture(t, Options{})
	f.pod(t, "file", "default", "web", nil, running("10.0.0.2"))
	crash := running("10.0.0.3")
	crash.Conditions = nil
	crash.ContainerStatuses[0] = v1.ContainerStatus{Name: "app", RestartCount: 3,
		State:                v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.Time{Time: t0.Add(58 * time.Second)}}}}
	f.pod(t, "file", "default", "crash", nil, crash)
	f.pod(t, "file", "default", "done", nil, v1.PodStatus{Phase: v1.PodSucceeded, ContainerStatuses: []v1.ContainerStatus{{Name: "app",
		State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: "Completed"}}}}})
	init := v1.PodStatus{Phase: v1.PodPending, InitContainerStatuses: []v1.ContainerStatus{{Name: "init",
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}},
		ContainerStatuses: []v1.ContainerStatus{{Name: "app", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "PodInitializing"}}}}}
	p := f.pod(t, "file", "default", "init", nil, init)
	cp := *p
	spec := p.Spec.DeepCopy()
	spec.Spec.InitContainers = []v1.Container{{Name: "init", Image: "img"}}
	cp.Spec = spec
	if err := f.st.UpsertPod(&cp); err != nil {
		t.Fatal(err)
	}
	f.clk.SetTime(t0.Add(2 * time.Minute))

	tab := getTable(t, f, "/api/v1/namespaces/default/pods")
	var cols []string
	for _, c := range tab.ColumnDefinitions {
		cols = append(cols, strings.ToUpper(c.Name)+map[bool]string{true: "*"}[c.Priority == 1])
	}
	if got := strings.Join(cols, ","); got != "NAME,READY,STATUS,RESTARTS,AGE,IP*,NODE*,NOMINATED NODE*,READINESS GATES*" {
		t.Fatalf("columns %s", got)
	}
	want := []string{
		"crash | 0/1 | CrashLoopBackOff | 3 (62s ago) | 2m | 10.0.0.3 | node1 | <none> | <none>",
		"done | 0/1 | Completed | 0 | 2m | <none> | node1 | <none> | <none>",
		"init | 0/1 | Init:0/1 | 0 | 2m | <none> | node1 | <none> | <none>",
		"web | 1/1 | Running | 0 | 2m | 10.0.0.2 | node1 | <none> | <none>",
	}
	if got := rowStrings(tab); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var meta metav1.PartialObjectMetadata
	if err := json.Unmarshal(tab.Rows[0].Object.Raw, &meta); err != nil || meta.Kind != "PartialObjectMetadata" || meta.Name != "crash" {
		t.Fatalf("row object %s: %v", tab.Rows[0].Object.Raw, err)
	}
	if tab.ResourceVersion == "" {
		t.Fatal("table without resourceVersion")
	}
	one := getTable(t, f, "/api/v1/namespaces/default/pods/web?includeObject=Object")
	var pod v1.Pod
	if err := json.Unmarshal(one.Rows[0].Object.Raw, &pod); err != nil || pod.Kind != "Pod" || pod.Status.PodIP != "10.0.0.2" || len(one.Rows) != 1 {
		t.Fatalf("one pod's table: %s %v", one.Rows[0].Object.Raw, err)
	}
}
