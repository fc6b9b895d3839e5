package runtime

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/berth-dev/berth/model"
)

// fakeEngine answers the Docker API calls of a container create: /_ping,
// /info with the default log driver given, and /containers/create, whose
// log configurations it records.
type fakeEngine struct {
	driver   string
	failInfo int // the first /info calls that fail

	mu      sync.Mutex
	infos   int
	created []container.LogConfig
}

func (e *fakeEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("API-Version", "1.47")
	w.Header().Set("Content-Type", "application/json")
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case r.URL.Path == "/_ping":
		w.Write([]byte("OK"))
	case strings.HasSuffix(r.URL.Path, "/info"):
		e.infos++
		if e.infos <= e.failInfo {
			http.Error(w, `{"message":"starting"}`, http.StatusInternalServerError)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"LoggingDriver": e.driver})
	case strings.HasSuffix(r.URL.Path, "/containers/create"):
		var body struct{ HostConfig container.HostConfig }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		e.created = append(e.created, body.HostConfig.LogConfig)
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"Id":"c1"}`))
	default:
		http.NotFound(w, r)
	}
}

// fakeDocker is a Docker on a fake engine whose default log driver is
// driver.
func fakeDocker(t *testing.T, driver string) (*Docker, *fakeEngine) {
	t.Helper()
	e := &fakeEngine{driver: driver}
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	d, err := NewDocker("tcp://" + strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, e
}

// TestContainerLogsRespectTheEngineDriver: on an engine whose default log
// driver is json-file or local, berth sets that driver with its rotation;
// on one that sends logs elsewhere (journald, fluentd), containers keep
// the daemon's driver and options, as the operator chose. The engine's
// driver is read once.
func TestContainerLogsRespectTheEngineDriver(t *testing.T) {
	for driver, want := range map[string]container.LogConfig{
		"json-file": {Type: "json-file", Config: map[string]string{"max-size": "8k", "max-file": "3"}},
		"local":     {Type: "local", Config: map[string]string{"max-size": "8k", "max-file": "3"}},
		"journald":  {},
		"fluentd":   {},
	} {
		t.Run(driver, func(t *testing.T) {
			d, e := fakeDocker(t, driver)
			d.SetContainerLogs(ContainerLogs{MaxSize: 8 << 10, MaxFiles: 3})
			for _, name := range []string{"a", "b"} {
				if _, err := d.CreateContainer(t.Context(), &ContainerConfig{Name: name, Image: "img"}); err != nil {
					t.Fatal(err)
				}
			}
			e.mu.Lock()
			defer e.mu.Unlock()
			for _, got := range e.created {
				if got.Type != want.Type || len(got.Config) != len(want.Config) ||
					got.Config["max-size"] != want.Config["max-size"] || got.Config["max-file"] != want.Config["max-file"] {
					t.Errorf("log config on a %s engine: %+v, want %+v", driver, got, want)
				}
			}
			if e.infos != 1 {
				t.Errorf("the engine's info read %d times for two containers, want once", e.infos)
			}
		})
	}
}

// A container is never created with a guessed driver: while the engine's
// info fails, creating fails, and the driver is read again next time.
func TestContainerLogDriverUnread(t *testing.T) {
	d, e := fakeDocker(t, "journald")
	e.failInfo = 1
	if _, err := d.CreateContainer(t.Context(), &ContainerConfig{Name: "a", Image: "img"}); err == nil || !strings.Contains(err.Error(), "docker info") {
		t.Fatalf("create while the engine's info fails: %v", err)
	}
	if _, err := d.CreateContainer(t.Context(), &ContainerConfig{Name: "a", Image: "img"}); err != nil {
		t.Fatal(err)
	}
	got, err := d.ContainerLogDriver(t.Context())
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil || got != (LogDriver{Engine: "journald"}) || len(e.created) != 1 || e.created[0].Type != "" || e.infos != 2 {
		t.Fatalf("after one failed read: %+v %v, created %+v, %d reads", got, err, e.created, e.infos)
	}
}

// On an engine whose log driver sends logs elsewhere, berth still reads a
// container's logs: the engine keeps a local copy (dual logging). Here the
// container logs to gelf over UDP, which nothing receives. Docker 20.10's
// local copy drops lines (seen here: one of the two a container writes
// at its start, stdout or stderr, running or exited), so either will do.
func TestDockerLogsUnderAnotherDriver(t *testing.T) {
	t.Parallel()
	d := testDocker(t)
	pod := uniquePod(t)
	config, hostConfig, err := dockerConfig(&ContainerConfig{Name: containerName(pod, "gelf"), Image: testImage,
		Cmd: []string{"sleep"}, Labels: testLabels(pod, "gelf")})
	if err != nil {
		t.Fatal(err)
	}
	hostConfig.LogConfig = container.LogConfig{Type: "gelf", Config: map[string]string{"gelf-address": "udp://127.0.0.1:9"}}
	resp, err := d.cli.ContainerCreate(t.Context(), config, hostConfig, nil, nil, containerName(pod, "gelf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.RemoveContainer(context.Background(), resp.ID) })
	start(t, d, resp.ID)
	waitState(t, d, resp.ID, model.StateRunning)
	var got []byte
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		rc, err := d.Logs(t.Context(), resp.ID, LogOptions{TailLines: -1})
		if err != nil {
			t.Fatalf("logs of a gelf container: %v", err)
		}
		got, _ = io.ReadAll(rc)
		rc.Close()
		if strings.Contains(string(got), "testapp sleep starting") || strings.Contains(string(got), "testapp sleep stderr") {
			return
		}
	}
	t.Fatalf("logs of a gelf container: %q", got)
}
