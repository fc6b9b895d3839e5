package benchkit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeBerth writes a script that stands in for the berth binary: it
// records its environment and then runs body.
func fakeBerth(t *testing.T, body string) (bin, envFile string) {
	dir := t.TempDir()
	bin, envFile = filepath.Join(dir, "berth"), filepath.Join(dir, "env")
	script := fmt.Sprintf("#!/bin/sh\nenv > %s\n%s\n", envFile, body)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, envFile
}

func logFile(t *testing.T) *os.File {
	f, err := os.Create(filepath.Join(t.TempDir(), "berth.log"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// berth gets the settings given, not the caller's BERTH_ variables, and
// Env wins over the defaults; an early exit is ErrExited.
func TestBerthExitsBeforeReady(t *testing.T) {
	t.Setenv("BERTH_NODE_NAME", "leaked")
	t.Setenv("BERTH_LEAKED", "1")
	bin, envFile := fakeBerth(t, "echo bye; exit 3")
	cfg := Berth{Bin: bin, Node: "n1", RootDir: "/r", PodsDir: "/p", Port: 1, DockerHost: "unix:///d.sock",
		Env: []string{"BERTH_DOCKER_HOST=unix:///other.sock"}}
	p, err := cfg.Start(logFile(t))
	if err != nil {
		t.Fatal(err)
	}
	err = p.WaitReady(context.Background(), 10*time.Second, 10*time.Millisecond)
	if !errors.Is(err, ErrExited) {
		t.Fatalf("WaitReady = %v, want ErrExited", err)
	}
	if st := p.State(); st == nil || st.ExitCode() != 3 {
		t.Errorf("State = %v", st)
	}
	data, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	env := string(data)
	for _, want := range []string{"BERTH_NODE_NAME=n1\n", "BERTH_ROOT_DIR=/r\n", "BERTH_SOURCES_FILE_PATH=/p\n", "BERTH_SERVER_PORT=1\n",
		"BERTH_CADVISOR_ENABLED=false\n", "BERTH_DOCKER_HOST=unix:///other.sock\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("berth's environment lacks %q", want)
		}
	}
	if strings.Contains(env, "BERTH_LEAKED") || strings.Contains(env, "leaked") {
		t.Error("the caller's BERTH_ variables reached berth")
	}
}

// WaitReady waits for /readyz 200, Metric reads an exact series, Stop
// ends a berth that does not exit on SIGTERM by killing it, and the log
// holds its output.
func TestBerthReadyMetricStop(t *testing.T) {
	ready := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/readyz":
			select {
			case <-ready:
			default:
				http.Error(w, "sources not synced", http.StatusServiceUnavailable)
			}
		case "/metrics":
			fmt.Fprint(w, "go_goroutines_total 1\ngo_goroutines 42\n")
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	bin, _ := fakeBerth(t, "echo started; trap '' TERM; while :; do sleep 0.1; done")
	log := logFile(t)
	p, err := Berth{Bin: bin, Port: port}.Start(log)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(0, func() {})
	err = p.WaitReady(context.Background(), 50*time.Millisecond, 10*time.Millisecond)
	if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "503 sources not synced") {
		t.Fatalf("WaitReady before ready = %v", err)
	}
	close(ready)
	if err := p.WaitReady(context.Background(), 10*time.Second, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if v, ok := p.Metric("go_goroutines", time.Second); !ok || v != 42 {
		t.Errorf("Metric = %v, %v", v, ok)
	}
	if _, ok := p.Metric("go_threads", time.Second); ok {
		t.Error("found a series that is not there")
	}
	killed := false
	p.Stop(100*time.Millisecond, func() { killed = true })
	if !killed || !p.Exited() {
		t.Errorf("Stop: killed %v, exited %v", killed, p.Exited())
	}
	if tail := LogTail(log.Name(), 3); tail != "ed\n" {
		t.Errorf("LogTail = %q", tail)
	}
}
