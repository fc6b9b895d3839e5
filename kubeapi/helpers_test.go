package kubeapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

// t0 is the fake clock's start: every test pod was seen at it.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type fixture struct {
	st  *store.Store
	clk *clocktesting.FakeClock
	api *API
	srv *httptest.Server
	cs  *kubernetes.Clientset
	cfg *rest.Config
}

// newFixture serves a New(o) API (o's Store and Clock filled in) with the
// routes mounted as the server does, minus the token checks: a request
// with "Authorization: Bearer push" sees only the push source's objects.
func newFixture(t testing.TB, o Options) *fixture {
	t.Helper()
	clk := clocktesting.NewFakeClock(t0)
	st, err := store.New(nil, store.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, clk: clk}
	o.Store, o.Clock = st, f.clk
	if o.Node == "" {
		o.Node = "node1"
	}
	if o.PushSource == "" {
		o.PushSource = "push"
	}
	o.Visible = func(r *http.Request, p *model.Pod) bool {
		return r.Header.Get("Authorization") != "Bearer push" || p.Source == "push"
	}
	f.api = New(o)
	mux := http.NewServeMux()
	for _, rt := range f.api.Routes() {
		mux.Handle(rt.Pattern, rt.Handler)
	}
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	f.cfg = &rest.Config{Host: f.srv.URL}
	f.cs = kubernetes.NewForConfigOrDie(f.cfg)
	return f
}

// pod stores a pod of source with labels and status; it returns the
// stored value.
func (f *fixture) pod(t testing.TB, source, ns, name string, lbls map[string]string, status v1.PodStatus) *model.Pod {
	t.Helper()
	p := &model.Pod{Key: ns + "/" + name, Source: source, Origin: "/etc/pods/" + name + ".yaml", SeenAt: t0,
		Spec: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name), Labels: lbls},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "img"}}}},
		Status: status}
	if err := f.st.UpsertPod(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func running(ip string) v1.PodStatus {
	return v1.PodStatus{Phase: v1.PodRunning, PodIP: ip, PodIPs: []v1.PodIP{{IP: ip}},
		Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}},
		ContainerStatuses: []v1.ContainerStatus{{Name: "app", Ready: true,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.Time{Time: t0}}}}}}
}

func newClientset(t *testing.T, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
