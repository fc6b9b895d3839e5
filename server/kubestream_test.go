package server

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/kubeapi"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/runtime/fake"
	"github.com/berth-dev/berth/store"
)

// The streaming subresources behind the token scopes: a push token reads
// the logs of the push source's pods only, and never execs, attaches or
// forwards ports; an admin token does.
func TestKubeStreamScopes(t *testing.T) {
	st, _ := store.New(nil)
	rt := fake.New(nil)
	rt.AddImage("img")
	for _, pod := range []struct{ name, source string }{{"pushed", "push"}, {"filed", "file"}} {
		spec := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.name, Namespace: "default"},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "img"}}}}
		labels := map[string]string{runtime.LabelPodNamespace: "default", runtime.LabelPodName: pod.name, runtime.LabelSource: pod.source,
			runtime.LabelContainerName: "app", runtime.LabelAttempt: "0"}
		id, err := rt.CreateContainer(context.Background(), &runtime.ContainerConfig{Name: pod.name, Image: "img", Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		_ = rt.StartContainer(context.Background(), id)
		rt.SetLogs(id, "log of "+pod.name+"\n")
		c, _ := rt.InspectContainer(context.Background(), id)
		_, _ = st.UpsertContainer(c)
		status := runningStatus("app", id)
		status.PodIP = "127.0.0.1"
		if err := st.UpsertPod(&model.Pod{Key: "default/" + pod.name, Source: pod.source, Spec: spec, Status: status}); err != nil {
			t.Fatal(err)
		}
		sandbox := &model.Container{ID: "sandbox-" + pod.name, PodKey: "default/" + pod.name, Source: pod.source, Name: model.SandboxName,
			State: model.StateRunning, IP: "127.0.0.1"}
		if _, err := st.UpsertContainer(sandbox); err != nil {
			t.Fatal(err)
		}
	}
	s := New(Options{Store: st, Tokens: []string{"admin"}, PushTokens: []string{"push"}})
	RegisterPush(s, "push", nil)
	kube := kubeapi.New(kubeapi.Options{Store: st, Visible: s.Visible})
	kube.AddStreams(rt)
	RegisterKube(s, kube.Routes())
	srv := httptest.NewServer(s)
	defer srv.Close()
	for _, tc := range []struct {
		token, method, path string
		code                int
		body                string
	}{
		{"push", "GET", "/pods/pushed/log", 200, "log of pushed\n"},
		{"push", "GET", "/pods/filed/log", 404, `pods \"filed\" not found`},
		{"admin", "GET", "/pods/filed/log", 200, "log of filed\n"},
		{"", "GET", "/pods/filed/log", 401, `"reason":"Unauthorized"`},
		{"push", "POST", "/pods/pushed/exec?command=echo&stdout=true", 403, `"reason":"Forbidden"`},
		{"push", "POST", "/pods/pushed/attach?stdout=true", 403, `"reason":"Forbidden"`},
		{"push", "POST", "/pods/pushed/portforward", 403, `"reason":"Forbidden"`},
		// An admin request that does not upgrade reaches the handler.
		{"admin", "POST", "/pods/pushed/exec?command=echo&stdout=true", 400, "Upgrade request required"},
		{"admin", "POST", "/pods/pushed/portforward", 400, "Upgrade request required"},
	} {
		code, b := do(t, tc.method, srv.URL+"/api/v1/namespaces/default"+tc.path, tc.token, nil)
		if code != tc.code || !strings.Contains(b, tc.body) {
			t.Errorf("%s %s with %q: %d %s, want %d with %q", tc.method, tc.path, tc.token, code, b, tc.code, tc.body)
		}
	}
}
