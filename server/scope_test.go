package server

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/runtime/fake"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/kubeapi"
	"github.com/berth-dev/berth/metrics"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/sources"
	"github.com/berth-dev/berth/stats"
	"github.com/berth-dev/berth/store"
)

const pushManifest = "apiVersion: v1\nkind: Pod\nmetadata: {name: new, namespace: default}\nspec:\n  containers: [{name: a, image: 'img:1'}]\n"

// scopeAPI serves every route with admin and push tokens as given, on a
// real listener. The store holds default/web from the file source (its
// container "app" runs, with logs) and default/pushed from the push source.
func scopeAPI(t *testing.T, admin, push []string) (base, addr string) {
	t.Helper()
	st, _ := store.New(nil)
	rt := fake.New(nil)
	rt.AddImage("img")
	for pod, src := range map[string]string{"web": "file", "pushed": "push"} {
		labels := map[string]string{runtime.LabelPodNamespace: "default", runtime.LabelPodName: pod, runtime.LabelSource: src,
			runtime.LabelContainerName: "app", runtime.LabelAttempt: "0"}
		id, err := rt.CreateContainer(t.Context(), &runtime.ContainerConfig{Name: "c-" + pod, Image: "img", Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.StartContainer(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		rt.SetLogs(id, "secret log of "+pod+"\n")
		c, _ := rt.InspectContainer(t.Context(), id)
		if _, err := st.UpsertContainer(c); err != nil {
			t.Fatal(err)
		}
		if err := st.UpsertPod(&model.Pod{Key: "default/" + pod, Source: src, Origin: src + "-origin",
			Spec:   &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: "default"}},
			Status: runningStatus("app", id)}); err != nil {
			t.Fatal(err)
		}
	}
	m := metrics.New()
	s := New(Options{Store: st, Registry: m.Registry, Tokens: admin, PushTokens: push, Events: store.EventRecorder{Store: st}.List})
	RegisterLogs(s, rt)
	RegisterExec(s, rt)
	RegisterRunningPods(s)
	RegisterProbes(s, m.ProbeRegistry)
	RegisterStats(s, stats.Unavailable{Reason: "test"})
	RegisterResource(s, stats.Unavailable{Reason: "test"})
	RegisterPush(s, "push", sources.NewPushSource("push", t.TempDir(), sources.Options{}).Routes())
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL, srv.Listener.Addr().String()
}

// podNames lists the pods a GET /pods with token answers.
func podNames(t *testing.T, base, token string) []string {
	t.Helper()
	code, body := do(t, "GET", base+"/pods", token, nil)
	var list v1.PodList
	if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil {
		t.Fatalf("GET /pods: %d %v %s", code, err, body)
	}
	var names []string
	for _, p := range list.Items {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

// watchNames lists the pods of a watch's initial ADDED events.
func watchNames(t *testing.T, base, token string) []string {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/pods?watch=1&sendInitialEvents=true", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("watch: %d", resp.StatusCode)
	}
	var names []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var ev WatchEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == kubeapi.WatchBookmark {
			sort.Strings(names)
			return names
		}
		names = append(names, ev.Object.Name)
	}
	t.Fatalf("watch ended before the bookmark: %v", sc.Err())
	return nil
}

// A push token creates, updates, deletes and reads push pods only; every
// other protected endpoint answers it 403, and exec or the logs of a file
// pod in particular.
func TestPushTokenIsScopedToPushPods(t *testing.T) {
	base, addr := scopeAPI(t, []string{"admin"}, []string{"pusher"})
	if got := podNames(t, base, "pusher"); strings.Join(got, ",") != "pushed" {
		t.Errorf("GET /pods with the push token: %v, want only the push pod", got)
	}
	if got := watchNames(t, base, "pusher"); strings.Join(got, ",") != "pushed" {
		t.Errorf("watch with the push token: %v, want only the push pod", got)
	}
	if got := podNames(t, base, "admin"); strings.Join(got, ",") != "pushed,web" {
		t.Errorf("GET /pods with the admin token: %v", got)
	}
	for path, want := range map[string]int{"/pods/default/pushed": 200, "/pods/default/web": 404} {
		if code, body := do(t, "GET", base+path, "pusher", nil); code != want {
			t.Errorf("GET %s with the push token: %d %s, want %d", path, code, body, want)
		}
	}
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/pods/default/new", pushManifest},
		{"PUT", "/pods/default/new", pushManifest},
		{"DELETE", "/pods/default/new", ""},
	} {
		if code, body := do(t, tc.method, base+tc.path, "pusher", strings.NewReader(tc.body)); code/100 != 2 {
			t.Errorf("%s %s with the push token: %d %s", tc.method, tc.path, code, body)
		}
	}
	for _, path := range []string{"/containerLogs/default/web/app", "/containerLogs/default/pushed/app", "/events",
		"/runningpods/", "/stats/summary", "/spec", "/metrics/cadvisor", "/metrics/resource", "/metrics/probes"} {
		code, body := do(t, "GET", base+path, "pusher", nil)
		if code != http.StatusForbidden || !strings.Contains(body, "sources.push.token_file") {
			t.Errorf("GET %s with the push token: %d %q, want 403 naming the push token", path, code, body)
		}
	}
	if _, code, body := dialExec(t, addr, "POST", execPathOf("web", "id"), "pusher", true); code != http.StatusForbidden {
		t.Errorf("exec in a file pod with the push token: %d %s, want 403", code, body)
	}
	if _, code, body := dialExec(t, addr, "POST", execPathOf("pushed", "id"), "pusher", true); code != http.StatusForbidden {
		t.Errorf("exec in a push pod with the push token: %d %s, want 403", code, body)
	}

	// The admin token opens them; an unknown one opens nothing.
	if code, body := do(t, "GET", base+"/containerLogs/default/web/app", "admin", nil); code != 200 || body != "secret log of web\n" {
		t.Errorf("logs with the admin token: %d %q", code, body)
	}
	if c, code, body := dialExec(t, addr, "POST", execPathOf("web", "id"), "admin", true); c == nil {
		t.Errorf("exec with the admin token: %d %s", code, body)
	}
	for _, path := range []string{"/pods", "/containerLogs/default/web/app"} {
		if code, _ := do(t, "GET", base+path, "stranger", nil); code != http.StatusUnauthorized {
			t.Errorf("GET %s with an unknown token: %d, want 401", path, code)
		}
	}
	if code, _ := do(t, "POST", base+"/pods/default/new", "stranger", strings.NewReader(pushManifest)); code != http.StatusUnauthorized {
		t.Errorf("push with an unknown token: %d, want 401", code)
	}
}

// Push tokens without admin tokens: pushing needs a push token, the rest
// is open as without any token file, except exec.
func TestPushTokenWithoutAdminTokens(t *testing.T) {
	base, addr := scopeAPI(t, nil, []string{"pusher"})
	if code, _ := do(t, "POST", base+"/pods/default/new", "", strings.NewReader(pushManifest)); code != http.StatusUnauthorized {
		t.Errorf("anonymous push: %d, want 401", code)
	}
	if code, body := do(t, "POST", base+"/pods/default/new", "pusher", strings.NewReader(pushManifest)); code != http.StatusCreated {
		t.Errorf("push with the push token: %d %s", code, body)
	}
	if got := podNames(t, base, ""); strings.Join(got, ",") != "pushed,web" {
		t.Errorf("anonymous GET /pods: %v", got)
	}
	if code, _ := do(t, "GET", base+"/containerLogs/default/web/app", "", nil); code != 200 {
		t.Errorf("anonymous logs without server.token_file: %d, want 200 as before", code)
	}
	if code, _ := do(t, "GET", base+"/containerLogs/default/web/app", "pusher", nil); code != http.StatusForbidden {
		t.Errorf("logs with the push token: %d, want 403", code)
	}
	if _, code, body := dialExec(t, addr, "POST", execPathOf("web", "id"), "", true); code != http.StatusForbidden || !strings.Contains(body, ErrAnonymousExec) {
		t.Errorf("anonymous exec: %d %s, want 403", code, body)
	}
}

// Without any token, pushing is refused: it is never anonymous.
func TestPushIsNeverAnonymous(t *testing.T) {
	base, _ := scopeAPI(t, nil, nil)
	for _, method := range []string{"POST", "PUT", "DELETE"} {
		if code, _ := do(t, method, base+"/pods/default/new", "", strings.NewReader(pushManifest)); code != http.StatusUnauthorized {
			t.Errorf("anonymous %s: %d, want 401", method, code)
		}
	}
	if got := podNames(t, base, ""); strings.Join(got, ",") != "pushed,web" {
		t.Errorf("anonymous GET /pods without token files: %v", got)
	}
}

// execPathOf is the /exec path of container app in default/pod.
func execPathOf(pod string, cmd ...string) string {
	return strings.Replace(execPath("app", false, false, cmd...), "/default/web/", "/default/"+pod+"/", 1)
}

// runningStatus is the status the controller writes for a pod whose one
// container name runs as instance id: logs read the instance it names.
func runningStatus(name, id string) v1.PodStatus {
	return v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{Name: name, ContainerID: "docker://" + id,
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}}
}
