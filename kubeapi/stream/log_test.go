package stream

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/runtime"
)

func TestPodLogs(t *testing.T) {
	f := newStreamFixture(t, nil)
	f.pod(t, "web", "10.0.0.2", map[string]string{DefaultContainerAnnotation: "side"}, "app", "side")
	f.instance(t, "web", "app", 0, false, "app 0\n")
	f.instance(t, "web", "app", 1, true, "app 1\nsecond line\n")
	f.instance(t, "web", "side", 0, true, "side 0\n")
	f.pod(t, "fresh", "10.0.0.3", nil, "app")
	logs := func(pod string, o *v1.PodLogOptions) (string, error) {
		rc, err := f.cs.CoreV1().Pods("default").GetLogs(pod, o).Stream(context.Background())
		if err != nil {
			return "", err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		return string(b), err
	}
	for _, tc := range []struct {
		pod  string
		o    v1.PodLogOptions
		want string
		err  string
	}{
		{"web", v1.PodLogOptions{Container: "app"}, "app 1\nsecond line\n", ""},
		{"web", v1.PodLogOptions{Container: "app", Previous: true}, "app 0\n", ""},
		{"web", v1.PodLogOptions{}, "side 0\n", ""},
		{"web", v1.PodLogOptions{Container: "app", LimitBytes: ptr(int64(8))}, "app 1\nse", ""},
		{"web", v1.PodLogOptions{Container: "side", Previous: true}, "", `previous terminated container "side" in pod "web" not found`},
		{"web", v1.PodLogOptions{Container: "nosuch"}, "", "container nosuch is not valid for pod web"},
		{"fresh", v1.PodLogOptions{}, "", `container "app" in pod "fresh" is waiting to start: ContainerCreating`},
		{"nosuch", v1.PodLogOptions{}, "", `pods "nosuch" not found`},
	} {
		got, err := logs(tc.pod, &tc.o)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %+v: %q, %v; want error %q", tc.pod, tc.o, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %+v: %q, %v; want %q", tc.pod, tc.o, got, err, tc.want)
		}
	}
	if code, body := f.get(t, "/api/v1/namespaces/default/pods/web/log", "push"); code != http.StatusNotFound || !strings.Contains(body, `pods \"web\" not found`) {
		t.Errorf("push token on a file pod: %d %s", code, body)
	}
	if code, body := f.get(t, "/api/v1/namespaces/default/pods/web/log?sinceSeconds=1&sinceTime=2026-01-01T00:00:00Z", ""); code != http.StatusBadRequest {
		t.Errorf("both since: %d %s", code, body)
	}
	if code, body := f.get(t, "/api/v1/namespaces/default/pods/web/log?tailLines=-1", ""); code != http.StatusBadRequest {
		t.Errorf("negative tailLines: %d %s", code, body)
	}
}

func ptr[T any](v T) *T { return &v }

// stampedLogs serves fixed timestamped lines and records the options.
type stampedLogs struct {
	Runtime
	opts  runtime.LogOptions
	lines string
}

func (s *stampedLogs) Logs(_ context.Context, _ string, o runtime.LogOptions) (io.ReadCloser, error) {
	s.opts = o
	text := s.lines
	if !o.Timestamps {
		var b strings.Builder
		for _, l := range strings.SplitAfter(text, "\n") {
			if _, rest, ok := strings.Cut(l, " "); ok {
				b.WriteString(rest)
			}
		}
		text = b.String()
	}
	return io.NopCloser(strings.NewReader(text)), nil
}

// sinceTime and sinceSeconds keep the lines stamped at or after the time,
// without stamps unless asked.
func TestPodLogsSince(t *testing.T) {
	src := &stampedLogs{lines: "2026-01-02T03:04:00.5Z old\n2026-01-02T03:04:05Z at\n2026-01-02T03:04:06.000000001Z new\n"}
	f := newStreamFixture(t, src)
	f.pod(t, "web", "10.0.0.2", nil, "app")
	f.instance(t, "web", "app", 0, true, "")
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		query, want string
	}{
		{"sinceTime=" + since.Format(time.RFC3339), "at\nnew\n"},
		{"sinceSeconds=5", "at\nnew\n"}, // the fixture's clock is at 03:04:10
		{"sinceSeconds=4", "new\n"},
		{"sinceTime=" + since.Format(time.RFC3339) + "&timestamps=true", "2026-01-02T03:04:05Z at\n2026-01-02T03:04:06.000000001Z new\n"},
		{"", "old\nat\nnew\n"},
		{"tailLines=2", "old\nat\nnew\n"},
	} {
		code, body := f.get(t, "/api/v1/namespaces/default/pods/web/log?"+tc.query, "")
		if code != 200 || body != tc.want {
			t.Errorf("%s: %d %q, want %q", tc.query, code, body, tc.want)
		}
	}
	if src.opts.TailLines != 2 {
		t.Errorf("tailLines not passed on: %+v", src.opts)
	}
}

// pods/log reads the instance the pod's served status names, as the
// kubelet does: in CrashLoopBackOff the engine holds only the instance
// that crashed (the one before was collected), and both logs and
// logs --previous print it; a terminated container that never got a new
// instance prints its last one; the waiting reasons are the kubelet's.
func TestPodLogsFollowStatus(t *testing.T) {
	f := newStreamFixture(t, nil)
	f.pod(t, "web", "10.0.0.2", nil, "app")
	older := f.instance(t, "web", "app", 0, false, "run 0\n")
	crashed := f.instance(t, "web", "app", 1, false, "run 1\n")
	running := f.instance(t, "web", "app", 2, true, "run 2\n")
	term := func(id string) *v1.ContainerStateTerminated {
		return &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", ContainerID: "docker://" + id}
	}
	for _, tc := range []struct {
		what      string
		cs        v1.ContainerStatus
		cur, prev string // log text, or "error: <message>"
	}{
		{"CrashLoopBackOff", v1.ContainerStatus{ContainerID: "docker://" + crashed,
			State:                v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: v1.ContainerState{Terminated: term(crashed)}},
			"run 1\n", "run 1\n"},
		{"running after restarts", v1.ContainerStatus{ContainerID: "docker://" + running,
			State:                v1.ContainerState{Running: &v1.ContainerStateRunning{}},
			LastTerminationState: v1.ContainerState{Terminated: term(crashed)}},
			"run 2\n", "run 1\n"},
		{"terminated", v1.ContainerStatus{ContainerID: "docker://" + crashed,
			State:                v1.ContainerState{Terminated: term(crashed)},
			LastTerminationState: v1.ContainerState{Terminated: term(older)}},
			"run 1\n", "run 0\n"},
		{"terminated without an instance of its own", v1.ContainerStatus{
			State:                v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 137, Reason: "ContainerStatusUnknown"}},
			LastTerminationState: v1.ContainerState{Terminated: term(crashed)}},
			"run 1\n", "run 1\n"},
		{"first run", v1.ContainerStatus{ContainerID: "docker://" + running, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}},
			"run 2\n", `error: previous terminated container "app" in pod "web" not found`},
		{"pulling", v1.ContainerStatus{State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}},
			`error: container "app" in pod "web" is waiting to start: trying and failing to pull image`, `error: previous terminated container "app" in pod "web" not found`},
		{"pull failed", v1.ContainerStatus{State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ErrImagePull"}}},
			`error: container "app" in pod "web" is waiting to start: image can't be pulled`, ""},
		{"created", v1.ContainerStatus{State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}},
			`error: container "app" in pod "web" is waiting to start: ContainerCreating`, ""},
		{"collected", v1.ContainerStatus{ContainerID: "docker://gone",
			State:                v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: v1.ContainerState{Terminated: term("gone")}},
			`error: container "app" in pod "web": its instance gone is no longer on the node`, `error: its instance gone is no longer on the node`},
		{"another pod's instance", v1.ContainerStatus{ContainerID: "docker://sandbox-web",
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}},
			`error: is no longer on the node`, ""},
	} {
		p, err := f.st.Pod(nil, "default/web")
		if err != nil {
			t.Fatal(err)
		}
		cp := *p
		cp.Status.ContainerStatuses = []v1.ContainerStatus{tc.cs}
		cp.Status.ContainerStatuses[0].Name = "app"
		if err := f.st.UpsertPod(&cp); err != nil {
			t.Fatal(err)
		}
		for q, want := range map[string]string{"": tc.cur, "?previous=true": tc.prev} {
			if want == "" {
				continue
			}
			code, body := f.get(t, "/api/v1/namespaces/default/pods/web/log"+q, "")
			if msg, isErr := strings.CutPrefix(want, "error: "); isErr {
				if code != http.StatusBadRequest || !strings.Contains(body, strings.ReplaceAll(msg, `"`, `\"`)) {
					t.Errorf("%s: log%s = %d %s, want 400 %s", tc.what, q, code, body, msg)
				}
			} else if code != http.StatusOK || body != want {
				t.Errorf("%s: log%s = %d %q, want %q", tc.what, q, code, body, want)
			}
		}
	}
}

// While its pod's sandbox is replaced, a container waits for its new
// instance and its status still names the old one, which runs: that one's
// log is served, as the kubelet serves a running container's until it is
// killed.
func TestLogInstanceOfAReplacedSandbox(t *testing.T) {
	p := &model.Pod{Spec: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, Status: v1.PodStatus{
		ContainerStatuses: []v1.ContainerStatus{{Name: "app", ContainerID: "docker://old",
			State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}}
	old := &model.Container{ID: "old", Name: "app", State: model.StateRunning}
	if got, err := LogInstance(p, []*model.Container{old}, "app", false); err != nil || got != old {
		t.Fatalf("got %v, %v; want the running old instance", got, err)
	}
	p.Status.ContainerStatuses[0].ContainerID = ""
	if _, err := LogInstance(p, []*model.Container{old}, "app", false); err == nil || !strings.Contains(err.Error(), "waiting to start: ContainerCreating") {
		t.Fatalf("no instance named: %v", err)
	}
}
