package stream

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

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
