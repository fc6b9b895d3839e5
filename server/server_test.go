package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/metrics"
	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/store"
)

func testServer(t *testing.T, tokens []string, ready ...Checker) *httptest.Server {
	t.Helper()
	st, _ := store.New(nil)
	_ = st.UpsertPod(&model.Pod{Key: "default/web", Source: "file", Origin: "/p/web.yaml",
		Spec:   &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}},
		Status: v1.PodStatus{Phase: v1.PodRunning}})
	m := metrics.New()
	m.RegisterState(st)
	srv := httptest.NewServer(New(Options{Store: st, Registry: m.Registry, Tokens: tokens, Ready: ready}))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url, token string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestTokenProtectsAllButHealthAndMetrics(t *testing.T) {
	srv := testServer(t, []string{"s3cret"})
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 200, "/pods": 401, "/pods/default/web": 401} {
		if got := get(t, srv.URL+path, "").StatusCode; got != want {
			t.Errorf("%s without token: %d, want %d", path, got, want)
		}
	}
	if got := get(t, srv.URL+"/pods", "wrong").StatusCode; got != 401 {
		t.Errorf("wrong token: %d", got)
	}
	resp := get(t, srv.URL+"/pods", "s3cret")
	var list v1.PodList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode, err)
	}
	if list.Kind != "PodList" || len(list.Items) != 1 || list.Items[0].Status.Phase != v1.PodRunning ||
		list.Items[0].Annotations["berth.io/origin"] != "/p/web.yaml" {
		t.Fatalf("list %+v", list)
	}
	if got := get(t, srv.URL+"/pods/default/nope", "s3cret").StatusCode; got != 404 {
		t.Errorf("missing pod: %d", got)
	}
}

func TestReadyzReportsProblems(t *testing.T) {
	srv := testServer(t, nil, func(context.Context) error { return errors.New("docker unreachable") })
	if got := get(t, srv.URL+"/readyz", "").StatusCode; got != http.StatusServiceUnavailable {
		t.Fatalf("readyz %d", got)
	}
	if got := get(t, srv.URL+"/pods", "").StatusCode; got != 200 {
		t.Fatalf("pods without configured tokens: %d", got)
	}
}

// readDeadlinePassed returns once the server at addr (host:port) has
// dropped a connection that sent nothing: its header read timeout has
// then passed for every connection opened before. With ReadHeader equal
// to Read, their Read deadlines have passed too.
func readDeadlinePassed(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := conn.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("idle connection: read %d bytes, %v; want the server to close it", n, err)
	}
}
