package cli

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/model"
)

// startWatch runs get pods -w (f) against a until the returned stop is called,
// which reports its error.
func startWatch(t *testing.T, a *cliAPI, f getFlags) (lines chan string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &lineWriter{lines: make(chan string, 100)}
	done := make(chan error, 1)
	go func() {
		done <- getPods(ctx, &apiClient{locator{server: a.url, tokenFile: a.tokenFile}}, f, nil, out, io.Discard)
	}()
	stop = func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(5 * time.Second):
			t.Fatal("get pods -w still running 5s after the interrupt")
			return nil
		}
	}
	t.Cleanup(func() { cancel() })
	return out.lines, stop
}

func nextLine(t *testing.T, lines chan string) string {
	t.Helper()
	select {
	case l := <-lines:
		return l
	case <-time.After(5 * time.Second):
		t.Fatal("no output line within 5s")
		return ""
	}
}

func rowFields(t *testing.T, lines chan string) []string {
	t.Helper()
	return strings.Fields(nextLine(t, lines))
}

func TestGetPodsWatch(t *testing.T) {
	a := newCLIAPI(t)
	a.addPod(t, "default", "a", "app")
	a.addPod(t, "default", "b", "app", "side")
	lines, stop := startWatch(t, a, getFlags{watch: true})

	header := nextLine(t, lines)
	if f := strings.Fields(header); strings.Join(f, " ") != "NAMESPACE NAME READY STATUS RESTARTS AGE" {
		t.Fatalf("header %q", header)
	}
	rowA := nextLine(t, lines)
	if f := strings.Fields(rowA); len(f) != 6 || f[1] != "a" || f[2] != "1/1" || f[3] != "Running" {
		t.Fatalf("row a %q", rowA)
	}
	if f := rowFields(t, lines); f[1] != "b" || f[2] != "2/2" {
		t.Fatalf("row b %v", f)
	}

	// The next row is the change below, in the table's columns.
	if _, err := a.st.UpdatePod("default/b", func(p *model.Pod) bool {
		p.Status.Phase = v1.PodFailed
		p.Status.ContainerStatuses = nil
		return true
	}); err != nil {
		t.Fatal(err)
	}
	row := nextLine(t, lines)
	if f := strings.Fields(row); f[1] != "b" || f[2] != "0/2" || f[3] != "Failed" {
		t.Fatalf("modified row %q", row)
	}
	if strings.Index(row, "0/2") != strings.Index(header, "READY") {
		t.Errorf("watch row not aligned with the table:\n%s%s", header, row)
	}

	// A change that no column shows prints no row (kubectl repeats b's).
	if _, err := a.st.UpdatePod("default/b", func(p *model.Pod) bool {
		p.Status.Message = "no column shows this"
		return true
	}); err != nil {
		t.Fatal(err)
	}
	a.addPod(t, "default", "c", "app")
	if f := rowFields(t, lines); f[1] != "c" || f[3] != "Running" {
		t.Fatalf("added row %v", f)
	}
	if err := a.st.DeletePod("default/a"); err != nil {
		t.Fatal(err)
	}
	if f := rowFields(t, lines); f[1] != "a" {
		t.Fatalf("deleted row %v", f)
	}
	if err := stop(); err != nil {
		t.Fatalf("interrupted watch: %v, want nil", err)
	}
}

func TestGetPodsWatchEventsAndJSON(t *testing.T) {
	a := newCLIAPI(t)
	a.addPod(t, "default", "a", "app")
	lines, stop := startWatch(t, a, getFlags{watch: true, watchEvents: true})
	if f := rowFields(t, lines); f[0] != "EVENT" || f[1] != "NAMESPACE" {
		t.Fatalf("header %v", f)
	}
	if f := rowFields(t, lines); f[0] != "ADDED" || f[2] != "a" {
		t.Fatalf("row %v", f)
	}
	_ = a.st.DeletePod("default/a")
	if f := rowFields(t, lines); f[0] != "DELETED" || f[2] != "a" {
		t.Fatalf("row %v", f)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	a.addPod(t, "default", "j", "app")
	lines, stop = startWatch(t, a, getFlags{watch: true, output: "json"})
	var obj strings.Builder
	for !strings.HasPrefix(obj.String(), "{") || !json.Valid([]byte(obj.String())) {
		obj.WriteString(nextLine(t, lines))
	}
	var p v1.Pod
	if err := json.Unmarshal([]byte(obj.String()), &p); err != nil || p.Name != "j" || p.Kind != "Pod" {
		t.Fatalf("-o json -w printed %q (%v)", obj.String(), err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestGetPodWatchByName(t *testing.T) {
	a := newCLIAPI(t)
	a.addPod(t, "default", "a", "app")
	a.addPod(t, "default", "b", "app")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &lineWriter{lines: make(chan string, 100)}
	done := make(chan error, 1)
	go func() {
		done <- getPods(ctx, &apiClient{locator{server: a.url, tokenFile: a.tokenFile}}, getFlags{watch: true}, []string{"b"}, out, io.Discard)
	}()
	if f := strings.Fields(nextLine(t, out.lines)); f[0] != "NAME" {
		t.Fatalf("header %v", f)
	}
	if f := rowFields(t, out.lines); f[0] != "b" || f[2] != "Running" {
		t.Fatalf("row %v", f)
	}
	for _, key := range []string{"default/a", "default/b"} {
		if _, err := a.st.UpdatePod(key, func(p *model.Pod) bool {
			p.Status.Phase = v1.PodFailed
			p.Status.ContainerStatuses = nil
			return true
		}); err != nil {
			t.Fatal(err)
		}
	}
	// b's change only: a's is not watched, b's row is not repeated.
	if f := rowFields(t, out.lines); f[0] != "b" || f[2] != "Failed" {
		t.Fatalf("changed row %v", f)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-out.lines:
		t.Errorf("extra line %q", l)
	default:
	}
}
