package stream

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podstatus"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/runtime/fake"
	"github.com/berth-dev/berth/store"
)

// streamFixture serves Routes on a fake runtime, mounted as
// the server does minus the token checks: "Authorization: Bearer push"
// sees only the push source's pods.
type streamFixture struct {
	clk *clocktesting.FakeClock
	st  *store.Store
	rt  *fake.Runtime
	srv *httptest.Server
	cfg *rest.Config
	cs  *kubernetes.Clientset
}

func newStreamFixture(t *testing.T, rt Runtime) *streamFixture {
	t.Helper()
	return streamFixtureWith(t, rt, nil)
}

// streamFixtureWith is newStreamFixture with the server's handler passed
// through wrap (nil: served as is).
func streamFixtureWith(t *testing.T, rt Runtime, wrap func(http.Handler) http.Handler) *streamFixture {
	t.Helper()
	st, err := store.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &streamFixture{st: st, rt: fake.New(nil), clk: clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 10, 0, time.UTC))}
	f.rt.AddImage("img")
	if rt == nil {
		rt = f.rt
	}
	routes := Routes(Options{Store: st, Clock: f.clk, Visible: func(r *http.Request, p *model.Pod) bool {
		return r.Header.Get("Authorization") != "Bearer push" || p.Source == "push"
	}}, rt)
	mux := http.NewServeMux()
	for _, r := range routes {
		mux.Handle(r.Pattern, r.Handler)
	}
	var h http.Handler = mux
	if wrap != nil {
		h = wrap(mux)
	}
	f.srv = httptest.NewServer(h)
	t.Cleanup(f.srv.Close)
	f.cfg = &rest.Config{Host: f.srv.URL}
	f.cs = kubernetes.NewForConfigOrDie(f.cfg)
	return f
}

// pod stores pod default/name (UID uid-name) of source "file" with the
// containers named, Running at ip: its sandbox, in the store only, runs
// with that address when ip is not "".
func (f *streamFixture) pod(t *testing.T, name, ip string, annotations map[string]string, ctrs ...string) *model.Pod {
	t.Helper()
	spec := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), Annotations: annotations}}
	for _, c := range ctrs {
		spec.Spec.Containers = append(spec.Spec.Containers, v1.Container{Name: c, Image: "img"})
	}
	p := &model.Pod{Key: "default/" + name, Source: "file", Spec: spec, Status: v1.PodStatus{Phase: v1.PodRunning, PodIP: ip}}
	if err := f.st.UpsertPod(p); err != nil {
		t.Fatal(err)
	}
	if ip != "" {
		f.sandbox(t, p, "sandbox-"+name, ip, true)
	}
	return p
}

// sandbox records (in the store only) sandbox id of p's incarnation at
// ip, running when run (else exited).
func (f *streamFixture) sandbox(t *testing.T, p *model.Pod, id, ip string, run bool) {
	t.Helper()
	state := model.StateRunning
	if !run {
		state = model.StateExited
	}
	c := &model.Container{ID: id, PodKey: p.Key, PodUID: string(p.Spec.UID), Source: p.Source, Name: model.SandboxName, IP: ip, State: state}
	if _, err := f.st.UpsertContainer(c); err != nil {
		t.Fatal(err)
	}
}

// instance creates attempt n of container ctr of pod default/name (UID
// uid-name, source "file") on the fake runtime, running when run (else
// exited), with log text logs, and records it in the store; it returns its
// ID.
func (f *streamFixture) instance(t *testing.T, name, ctr string, n int, run bool, logs string) string {
	t.Helper()
	return f.instanceOf(t, name, "uid-"+name, "file", ctr, n, run, logs)
}

// instanceOf is instance for pod default/name's incarnation uid of source.
func (f *streamFixture) instanceOf(t *testing.T, name, uid, source, ctr string, n int, run bool, logs string) string {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{runtime.LabelPodNamespace: "default", runtime.LabelPodName: name, runtime.LabelPodUID: uid,
		runtime.LabelSource: source, runtime.LabelContainerName: ctr, runtime.LabelAttempt: strconv.Itoa(n)}
	id, err := f.rt.CreateContainer(ctx, &runtime.ContainerConfig{Name: name + "-" + uid + "-" + source + "-" + ctr + "-" + strconv.Itoa(n), Image: "img", Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.rt.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	if !run {
		f.rt.Exit(id, 1)
	}
	f.rt.SetLogs(id, logs)
	c, err := f.rt.InspectContainer(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.UpsertContainer(c); err != nil {
		t.Fatal(err)
	}
	f.containerStatuses(t, "default/"+name)
	return id
}

// containerStatuses sets the container statuses of pod key, when stored,
// as the controller computes them from the store's containers of its
// incarnation (the rest of its status stays as the fixture set it).
func (f *streamFixture) containerStatuses(t *testing.T, key string) {
	t.Helper()
	p, err := f.st.Pod(nil, key)
	if err != nil || p == nil || p.Spec == nil {
		return
	}
	ctrs, err := f.st.ContainersByPod(nil, key)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]*model.Container{}
	for _, c := range IncarnationOf(ctrs, p) {
		byName[c.Name] = Instances(IncarnationOf(ctrs, p), c.Name)
	}
	s := podstatus.Compute(p, byName, &podstatus.Input{})
	cp := *p
	cp.Status.ContainerStatuses, cp.Status.InitContainerStatuses = s.ContainerStatuses, s.InitContainerStatuses
	if err := f.st.UpsertPod(&cp); err != nil {
		t.Fatal(err)
	}
}

// get returns the status code and body of GET path with token.
func (f *streamFixture) get(t *testing.T, path, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", f.srv.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestDefaultContainer(t *testing.T) {
	p := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a"}, {Name: "b"}}}}
	if got := DefaultContainer(p); got != "a" {
		t.Errorf("no annotation: %q, want the first", got)
	}
	p.Annotations = map[string]string{DefaultContainerAnnotation: "b"}
	if got := DefaultContainer(p); got != "b" {
		t.Errorf("annotation b: %q", got)
	}
	p.Annotations[DefaultContainerAnnotation] = "nosuch"
	if got := DefaultContainer(p); got != "a" {
		t.Errorf("annotation naming no container: %q, want the first", got)
	}
	if got := DefaultContainer(&v1.Pod{}); got != "" {
		t.Errorf("no containers: %q", got)
	}
}

func TestInstancesNewestFirst(t *testing.T) {
	got := Instances([]*model.Container{{ID: "1", Name: "a", Attempt: 1}, {ID: "x", Name: "b", Attempt: 5}, {ID: "2", Name: "a", Attempt: 2}, {ID: "0", Name: "a"}}, "a")
	var ids []string
	for _, c := range got {
		ids = append(ids, c.ID)
	}
	if strings.Join(ids, ",") != "2,1,0" {
		t.Errorf("instances %v, want 2,1,0", ids)
	}
}
