package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/metrics"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/runtime/fake"
	"github.com/berth-dev/berth/store"
)

// A removed trusted pod's container still runs under its name when a push
// pod takes it: /containerLogs and /exec of that name reach the push pod's
// own containers only, never the trusted pod's, whatever UID the push pod
// has. With no pod declared, the newest incarnation's containers are
// served.
func TestLogsAndExecFollowIncarnation(t *testing.T) {
	ctx := context.Background()
	for _, newUID := range []types.UID{"uid-pushed", "uid-web"} {
		t.Run(string(newUID), func(t *testing.T) {
			st, _ := store.New(nil)
			rt := fake.New(nil)
			rt.AddImage("img")
			add := func(uid, source, logs string) string {
				t.Helper()
				labels := map[string]string{runtime.LabelPodNamespace: "default", runtime.LabelPodName: "web", runtime.LabelPodUID: uid,
					runtime.LabelSource: source, runtime.LabelContainerName: "app", runtime.LabelAttempt: "0"}
				id, err := rt.CreateContainer(ctx, &runtime.ContainerConfig{Name: "app-" + uid + "-" + source, Image: "img", Labels: labels})
				if err != nil {
					t.Fatal(err)
				}
				if err := rt.StartContainer(ctx, id); err != nil {
					t.Fatal(err)
				}
				rt.SetLogs(id, logs)
				c, _ := rt.InspectContainer(ctx, id)
				if _, err := st.UpsertContainer(c); err != nil {
					t.Fatal(err)
				}
				return id
			}
			old := add("uid-web", "file", "db password is hunter2\n")
			s := New(Options{Store: st, Registry: metrics.New().Registry, Tokens: []string{"tok"}})
			RegisterLogs(s, rt)
			srv := httptest.NewServer(s)
			defer srv.Close()
			logs := func() (int, string) {
				resp := get(t, srv.URL+"/containerLogs/default/web/app", "tok")
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}

			// No pod declared: the stopping pod's own logs are served.
			if code, body := logs(); code != http.StatusOK || body != "db password is hunter2\n" {
				t.Fatalf("logs of the removed pod: %d %q", code, body)
			}
			if id, code, msg := execTarget(st, "default", "web", "app"); id != old {
				t.Fatalf("exec into the removed pod: %q %d %s", id, code, msg)
			}

			pushed := &model.Pod{Key: "default/web", Source: "push", Spec: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: newUID},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "img"}}}}}
			if err := st.UpsertPod(pushed); err != nil {
				t.Fatal(err)
			}
			if code, body := logs(); code != http.StatusNotFound || strings.Contains(body, "hunter2") {
				t.Errorf("logs of the push pod before its container: %d %q", code, body)
			}
			if id, code, msg := execTarget(st, "default", "web", "app"); id != "" || code != http.StatusNotFound {
				t.Errorf("exec into the push pod before its container: %q %d %s", id, code, msg)
			}

			mine := add(string(newUID), "push", "mine\n")
			// Its status names it, as the controller writes it.
			running := *pushed
			running.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app", ContainerID: "docker://" + mine,
				State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}
			if err := st.UpsertPod(&running); err != nil {
				t.Fatal(err)
			}
			if code, body := logs(); code != http.StatusOK || body != "mine\n" {
				t.Errorf("logs of the running push pod: %d %q", code, body)
			}
			if id, code, msg := execTarget(st, "default", "web", "app"); id != mine {
				t.Errorf("exec into the running push pod: %q %d %s", id, code, msg)
			}
		})
	}
}
