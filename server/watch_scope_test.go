package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/kubeapi"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

// rawPodWatch opens GET /pods?watch=1 with token; its lines arrive on the
// channel until the stream ends.
func rawPodWatch(t *testing.T, base, token string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/pods?watch=1", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch: %s", resp.Status)
	}
	ch := make(chan string)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			select {
			case ch <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// TestPodWatchKeepsTheSourceBoundary: a push pod's key taken by the
// trusted source's pod reaches the push token's /pods?watch=1 as the push
// pod's deletion only; the admin sees a deletion and a creation, never one
// pod modified into another.
func TestPodWatchKeepsTheSourceBoundary(t *testing.T) {
	st, _ := store.New(nil)
	s := New(Options{Store: st, Tokens: []string{"admin"}, PushTokens: []string{"pusher"}})
	s.pushSource = "push"
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	put := func(source, name, value string) {
		t.Helper()
		if err := st.UpsertPod(&model.Pod{Key: "default/" + name, Source: source, Origin: source + ".yaml",
			Spec: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(source + "-" + name)},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "img", Env: []v1.EnvVar{{Name: "SECRET", Value: value}}}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	next := func(ch <-chan string) WatchEvent {
		t.Helper()
		line, ok := <-ch
		if !ok {
			t.Fatal("watch ended")
		}
		if strings.Contains(line, "hunter2") {
			t.Fatalf("a watch line carries the trusted pod: %s", line)
		}
		var ev WatchEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	put("push", "x", "mine")
	pusher, admin := rawPodWatch(t, srv.URL, "pusher"), rawPodWatch(t, srv.URL, "admin")
	expectEvent(t, next(pusher), kubeapi.WatchAdded, "x")
	expectEvent(t, next(admin), kubeapi.WatchAdded, "x")

	if err := st.DeletePod("default/x"); err != nil {
		t.Fatal(err)
	}
	put("file", "x", "hunter2")
	put("push", "y", "mine")
	// Until y: x's deletion, as the push token saw x (one diff may hold
	// both, in either order).
	var got []string
	for len(got) < 2 {
		ev := next(pusher)
		got = append(got, ev.Type+" "+string(ev.Object.UID))
	}
	if strings.Join(got, ",") != "DELETED push-x,ADDED push-y" && strings.Join(got, ",") != "ADDED push-y,DELETED push-x" {
		t.Fatalf("push watch: %q, want DELETED push-x and ADDED push-y", got)
	}

	put("file", "z", "")
	var xs []string
	for {
		var ev WatchEvent
		line, ok := <-admin
		if !ok {
			t.Fatal("admin watch ended")
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Object.Name == "x" {
			xs = append(xs, ev.Type+" "+string(ev.Object.UID))
		}
		if ev.Object.Name == "z" {
			break
		}
	}
	if strings.Join(xs, ",") != "DELETED push-x,ADDED file-x" {
		t.Fatalf("admin watch of x: %q, want DELETED push-x then ADDED file-x", xs)
	}
}
