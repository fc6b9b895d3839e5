package stream

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

// reached records the containers the streams were opened on.
type reached struct {
	*streamFixture
	mu  sync.Mutex
	ids []string
}

func (r *reached) add(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = append(r.ids, id)
}

func (r *reached) Logs(ctx context.Context, id string, o runtime.LogOptions) (io.ReadCloser, error) {
	r.add(id)
	return r.rt.Logs(ctx, id, o)
}

func (r *reached) ExecStream(ctx context.Context, id string, o runtime.ExecOptions) (int, error) {
	r.add(id)
	return r.rt.ExecStream(ctx, id, o)
}

func (r *reached) Attach(ctx context.Context, id string, o runtime.ExecOptions) error {
	r.add(id)
	return r.rt.Attach(ctx, id, o)
}

func (r *reached) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...)
}

// A trusted pod was removed and its containers still stop under its key
// when a push pod takes the name (with a UID of its own, or with the
// removed pod's UID, which a client may choose): no stream of the push
// pod reaches the removed pod's containers, for the push client or the
// admin, until the push pod's own containers run.
func TestStreamsFollowIncarnation(t *testing.T) {
	for _, newUID := range []types.UID{"uid-pushed", "uid-web"} {
		t.Run(string(newUID), func(t *testing.T) {
			r := &reached{}
			r.streamFixture = newStreamFixture(t, r)
			f := r.streamFixture
			trusted := &model.Pod{Key: "default/web", Source: "file", Spec: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"}}}
			old := f.instanceOf(t, "web", "uid-web", "file", "app", 0, true, "db password is hunter2\n")
			f.sandbox(t, trusted, "sandbox-trusted", "127.0.0.1", true)

			spec := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: newUID},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "img"}}}}
			pushed := &model.Pod{Key: "default/web", Source: "push", Spec: spec, Status: v1.PodStatus{Phase: v1.PodPending}}
			if err := f.st.UpsertPod(pushed); err != nil {
				t.Fatal(err)
			}

			for _, q := range []string{"", "?previous=true", "?sinceSeconds=3600", "?container=app&timestamps=true"} {
				for _, token := range []string{"push", ""} {
					code, body := f.get(t, "/api/v1/namespaces/default/pods/web/log"+q, token)
					if strings.Contains(body, "hunter2") || code == http.StatusOK {
						t.Errorf("log%s with token %q: %d %s", q, token, code, body)
					}
				}
			}
			execU := f.execURL("web", []string{"echo", "hi"}, false, false)
			for name, ex := range f.executors(t, execU) {
				err := ex.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: io.Discard, Stderr: io.Discard})
				if err == nil || !strings.Contains(err.Error(), `container "app" in pod "web" is waiting to start`) {
					t.Errorf("exec %s: %v", name, err)
				}
			}
			for name, ex := range f.executors(t, f.attachURL("web")) {
				err := ex.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard})
				if err == nil || !strings.Contains(err.Error(), "waiting to start") {
					t.Errorf("attach %s: %v", name, err)
				}
			}
			for name, d := range f.dialers(t, "web") {
				if _, _, err := d.Dial(portforward.PortForwardProtocolV1Name); err == nil || !strings.Contains(err.Error(), "pod web has no IP yet") {
					t.Errorf("port-forward %s: %v", name, err)
				}
			}
			for _, id := range r.all() {
				if id == old {
					t.Fatalf("a stream of the push pod reached the trusted pod's container")
				}
			}

			// The push pod's own containers run: its streams reach them.
			mine := f.instanceOf(t, "web", string(newUID), "push", "app", 0, true, "mine\n")
			f.sandbox(t, pushed, "sandbox-pushed", "127.0.0.1", true)
			if code, body := f.get(t, "/api/v1/namespaces/default/pods/web/log", "push"); code != http.StatusOK || body != "mine\n" {
				t.Errorf("log of the running push pod: %d %q", code, body)
			}
			for name, ex := range f.executors(t, execU) {
				var out strings.Builder
				if err := ex.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: &out, Stderr: io.Discard}); err != nil || out.String() != "hi\n" {
					t.Errorf("exec %s in the running push pod: %q %v", name, out.String(), err)
				}
			}
			for name, d := range f.dialers(t, "web") {
				if _, _, err := d.Dial(portforward.PortForwardProtocolV1Name); err != nil {
					t.Errorf("port-forward %s to the running push pod: %v", name, err)
				}
			}
			for _, id := range r.all() {
				if id != mine {
					t.Fatalf("reached %s, not the push pod's container %s", id, mine)
				}
			}
		})
	}
}
