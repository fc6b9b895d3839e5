package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

func TestRunningPodsFromActualContainers(t *testing.T) {
	st, err := store.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0)
	for _, c := range []*model.Container{
		{ID: "s1", PodKey: "shop/cart", PodUID: "u1", Name: model.SandboxName, Image: "pause", State: model.StateRunning},
		{ID: "c1", PodKey: "shop/cart", PodUID: "u1", Name: "web", Image: "nginx:1", State: model.StateRunning, StartedAt: t0},
		// A newer instance of web: listed instead of c1.
		{ID: "c2", PodKey: "shop/cart", PodUID: "u1", Name: "web", Image: "nginx:2", State: model.StateRunning, StartedAt: t0.Add(time.Minute)},
		{ID: "c3", PodKey: "shop/cart", PodUID: "u1", Name: "cache", Image: "redis", State: model.StateRunning, StartedAt: t0},
		{ID: "c4", PodKey: "shop/cart", PodUID: "u1", Name: "init", Image: "busybox", State: model.StateExited},
		// Only a sandbox and an exited container: not a running pod.
		{ID: "s2", PodKey: "default/done", PodUID: "u2", Name: model.SandboxName, Image: "pause", State: model.StateRunning},
		{ID: "c5", PodKey: "default/done", PodUID: "u2", Name: "job", Image: "busybox", State: model.StateExited},
		// Running with no desired pod in the store (an orphan): listed.
		{ID: "c6", PodKey: "default/orphan", PodUID: "u3", Name: "app", Image: "app:v1", State: model.StateRunning},
	} {
		if _, err := st.UpsertContainer(c); err != nil {
			t.Fatal(err)
		}
	}
	s := New(Options{Store: st, Tokens: []string{"tok"}})
	RegisterRunningPods(s)
	hs := httptest.NewServer(s)
	defer hs.Close()

	for _, path := range []string{"/runningpods", "/runningpods/"} {
		if code, _, _ := fetch(t, hs.URL+path, ""); code != http.StatusUnauthorized {
			t.Errorf("%s without token = %d, want 401", path, code)
		}
		code, _, body := fetch(t, hs.URL+path, "tok")
		if code != http.StatusOK {
			t.Fatalf("%s = %d %s", path, code, body)
		}
		var list v1.PodList
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatal(err)
		}
		if list.Kind != "PodList" || list.APIVersion != "v1" || len(list.Items) != 2 {
			t.Fatalf("%s = %s", path, body)
		}
		orphan, cart := list.Items[0], list.Items[1]
		if orphan.Namespace != "default" || orphan.Name != "orphan" || orphan.UID != "u3" ||
			!reflect.DeepEqual(orphan.Spec.Containers, []v1.Container{{Name: "app", Image: "app:v1"}}) {
			t.Errorf("orphan = %+v", orphan)
		}
		want := []v1.Container{{Name: "cache", Image: "redis"}, {Name: "web", Image: "nginx:2"}}
		if cart.Namespace != "shop" || cart.Name != "cart" || cart.UID != "u1" || !reflect.DeepEqual(cart.Spec.Containers, want) {
			t.Errorf("cart = %+v, want containers %+v", cart, want)
		}
	}
}

func TestRunningPodsEmpty(t *testing.T) {
	st, _ := store.New(nil)
	s := New(Options{Store: st})
	RegisterRunningPods(s)
	hs := httptest.NewServer(s)
	defer hs.Close()
	if code, _, body := fetch(t, hs.URL+"/runningpods/", ""); code != http.StatusOK ||
		body != "{\n  \"kind\": \"PodList\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"items\": []\n}\n" {
		t.Errorf("empty /runningpods/ = %d %q", code, body)
	}
}
