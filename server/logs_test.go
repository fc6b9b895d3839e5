package server

import (
	"context"
	"io"
	"net/http/httptest"
	"testing"

	"github.com/berth-dev/berth/runtime/fake"

	"github.com/berth-dev/berth/metrics"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

func TestContainerLogs(t *testing.T) {
	st, _ := store.New(nil)
	rt := fake.New(nil)
	rt.AddImage("img")
	ids := map[int]string{}
	for attempt := 0; attempt < 2; attempt++ {
		labels := map[string]string{runtime.LabelPodNamespace: "default", runtime.LabelPodName: "web",
			runtime.LabelContainerName: "app", runtime.LabelAttempt: string(rune('0' + attempt))}
		id, err := rt.CreateContainer(context.Background(), &runtime.ContainerConfig{Name: "c" + labels[runtime.LabelAttempt], Image: "img", Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		ids[attempt] = id
		rt.SetLogs(id, "log of attempt "+labels[runtime.LabelAttempt]+"\n")
		c, _ := rt.InspectContainer(context.Background(), id)
		_, _ = st.UpsertContainer(c)
	}
	s := New(Options{Store: st, Registry: metrics.New().Registry, Tokens: []string{"tok"}})
	RegisterLogs(s, rt)
	srv := httptest.NewServer(s)
	defer srv.Close()

	body := func(path string, token string, want int) string {
		t.Helper()
		resp := get(t, srv.URL+path, token)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s: %d %s, want %d", path, resp.StatusCode, b, want)
		}
		return string(b)
	}
	if got := body("/containerLogs/default/web/app", "tok", 200); got != "log of attempt 1\n" {
		t.Errorf("current logs %q", got)
	}
	if got := body("/containerLogs/default/web/app?previous=true", "tok", 200); got != "log of attempt 0\n" {
		t.Errorf("previous logs %q", got)
	}
	body("/containerLogs/default/web/app", "", 401)
	body("/containerLogs/default/web/nope", "tok", 404)
	body("/containerLogs/default/web/app?tailLines=-3", "tok", 400)
	body("/containerLogs/default/web/app?follow=maybe", "tok", 400)
	body("/containerLogs/default/web/..%2F..%2Fetc%2Fpasswd", "tok", 404)
}
