package runtime

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/docker/docker/pkg/jsonmessage"
)

func TestPullProgressString(t *testing.T) {
	for _, tc := range []struct {
		p    PullProgress
		want string
	}{
		{PullProgress{}, "0 B of 0 B (0/0 layers)"},
		{PullProgress{Done: 512, Total: 2048, Layers: 1}, "512 B of 2.0 KiB (0/1 layers)"},
		{PullProgress{Done: 12_900_000, Total: 42_000_000, Layers: 5, LayersDone: 2}, "12.3 MiB of 40.1 MiB (2/5 layers)"},
		{PullProgress{Done: 3 << 30, Total: 3 << 30, Layers: 1, LayersDone: 1}, "3.0 GiB of 3.0 GiB (1/1 layers)"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.p, got, tc.want)
		}
	}
}

// The tracker sums the engine's per-layer messages, as Docker 20.10 sends
// them, and reports only changes.
func TestPullTrackerFoldsLayerMessages(t *testing.T) {
	stream := `{"status":"Pulling from team/app","id":"1"}
{"status":"Pulling fs layer","progressDetail":{},"id":"aaa"}
{"status":"Pulling fs layer","progressDetail":{},"id":"bbb"}
{"status":"Waiting","progressDetail":{},"id":"bbb"}
{"status":"Downloading","progressDetail":{"current":1024,"total":4096},"progress":"[==>  ]","id":"aaa"}
{"status":"Downloading","progressDetail":{"current":1024,"total":4096},"progress":"[==>  ]","id":"aaa"}
{"status":"Downloading","progressDetail":{"current":4096,"total":4096},"progress":"[=====>]","id":"aaa"}
{"status":"Verifying Checksum","progressDetail":{},"id":"aaa"}
{"status":"Download complete","progressDetail":{},"id":"aaa"}
{"status":"Downloading","progressDetail":{"current":100,"total":1000},"id":"bbb"}
{"status":"Extracting","progressDetail":{"current":4096,"total":4096},"id":"aaa"}
{"status":"Pull complete","progressDetail":{},"id":"aaa"}
{"status":"Digest: sha256:0123"}
{"status":"Status: Downloaded newer image for team/app:1"}`
	var tr pullTracker
	var got []string
	for _, line := range strings.Split(stream, "\n") {
		var msg jsonmessage.JSONMessage
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatal(err)
		}
		if tr.add(&msg) {
			p := tr.progress()
			got = append(got, p.String())
		}
	}
	want := []string{
		"0 B of 0 B (0/1 layers)",
		"0 B of 0 B (0/2 layers)",
		"1.0 KiB of 4.0 KiB (0/2 layers)",
		"4.0 KiB of 4.0 KiB (0/2 layers)",
		"4.0 KiB of 4.0 KiB (1/2 layers)",
		"4.1 KiB of 5.0 KiB (1/2 layers)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("progress reports:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
