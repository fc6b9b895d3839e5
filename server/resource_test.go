package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/stats"
	"github.com/berth-dev/berth/store"
)

func resourceServer(t *testing.T, p stats.Provider, tokens ...string) *httptest.Server {
	t.Helper()
	st, err := store.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Store: st, Tokens: tokens})
	RegisterResource(s, p)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs
}

func u64p(v uint64) *uint64 { return &v }

// at is a stats time: 1700000000s plus ms milliseconds.
func at(ms int64) metav1.Time { return metav1.NewTime(time.UnixMilli(1_700_000_000_000 + ms)) }

func TestResourceMetricsFromSummary(t *testing.T) {
	sum := &stats.Summary{
		Node: stats.NodeStats{NodeName: "n1",
			CPU:    &stats.CPUStats{Time: at(1), UsageCoreNanoSeconds: u64p(12_500_000_000), UsageNanoCores: u64p(7)},
			Memory: &stats.MemoryStats{Time: at(2), WorkingSetBytes: u64p(1 << 30), UsageBytes: u64p(2 << 30)}},
		Pods: []stats.PodStats{{
			PodRef: stats.PodReference{Name: "cart", Namespace: "shop", UID: "u1"},
			Containers: []stats.ContainerStats{
				{Name: "web", StartTime: metav1.NewTime(time.Unix(1_699_999_000, 500_000_000)),
					CPU:    &stats.CPUStats{Time: at(10), UsageCoreNanoSeconds: u64p(1_500_000_000)},
					Memory: &stats.MemoryStats{Time: at(11), WorkingSetBytes: u64p(2048)}},
				// No CPU yet and no start time: only its memory.
				{Name: "side", Memory: &stats.MemoryStats{Time: at(12), WorkingSetBytes: u64p(1024)},
					CPU: &stats.CPUStats{Time: at(12)}},
			},
			CPU:    &stats.CPUStats{Time: at(20), UsageCoreNanoSeconds: u64p(2_000_000_000)},
			Memory: &stats.MemoryStats{Time: at(21), WorkingSetBytes: u64p(4096)},
		}, {
			// A pod without stats yet contributes nothing.
			PodRef: stats.PodReference{Name: "new", Namespace: "default", UID: "u2"},
		}},
	}
	hs := resourceServer(t, &fakeStats{summary: sum}, "tok")
	if code, _, _ := fetch(t, hs.URL+"/metrics/resource", ""); code != http.StatusUnauthorized {
		t.Fatalf("/metrics/resource without token = %d, want 401", code)
	}
	code, ct, body := fetch(t, hs.URL+"/metrics/resource", "tok")
	if code != http.StatusOK || !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("/metrics/resource = %d %s\n%s", code, ct, body)
	}
	want := `# HELP container_cpu_usage_seconds_total Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="web",namespace="shop",pod="cart"} 1.5 1700000000010
# HELP container_memory_working_set_bytes Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="side",namespace="shop",pod="cart"} 1024 1700000000012
container_memory_working_set_bytes{container="web",namespace="shop",pod="cart"} 2048 1700000000011
# HELP container_start_time_seconds Start time of the container since unix epoch in seconds
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="web",namespace="shop",pod="cart"} 1.6999990005e+09
# HELP node_cpu_usage_seconds_total Cumulative cpu time consumed by the node in core-seconds
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 12.5 1700000000001
# HELP node_memory_working_set_bytes Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 1.073741824e+09 1700000000002
# HELP pod_cpu_usage_seconds_total Cumulative cpu time consumed by the pod in core-seconds
# TYPE pod_cpu_usage_seconds_total counter
pod_cpu_usage_seconds_total{namespace="shop",pod="cart"} 2 1700000000020
# HELP pod_memory_working_set_bytes Current working set of the pod in bytes
# TYPE pod_memory_working_set_bytes gauge
pod_memory_working_set_bytes{namespace="shop",pod="cart"} 4096 1700000000021
# HELP resource_scrape_error 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 0
# HELP scrape_error 1 if there was an error while getting container metrics, 0 otherwise
# TYPE scrape_error gauge
scrape_error 0
`
	if body != want {
		t.Fatalf("/metrics/resource:\n%s\nwant:\n%s", body, want)
	}
}

// TestResourceMetricsWithoutStats: like the kubelet, a failed summary is a
// 200 with scrape_error 1 and nothing else, not a 503.
func TestResourceMetricsWithoutStats(t *testing.T) {
	for _, p := range []stats.Provider{stats.Unavailable{Reason: "cadvisor.enabled is false"}, nil,
		&fakeStats{err: errors.New("boom")}} {
		hs := resourceServer(t, p)
		code, _, body := fetch(t, hs.URL+"/metrics/resource", "")
		want := `# HELP resource_scrape_error 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 1
# HELP scrape_error 1 if there was an error while getting container metrics, 0 otherwise
# TYPE scrape_error gauge
scrape_error 1
`
		if code != http.StatusOK || body != want {
			t.Errorf("/metrics/resource (provider %v) = %d\n%s", p, code, body)
		}
	}
}

// ctxStats records the context its Summary was called with.
type ctxStats struct {
	fakeStats
	got chan context.Context
}

func (c *ctxStats) Summary(ctx context.Context) (*stats.Summary, error) {
	c.got <- ctx
	return &stats.Summary{}, nil
}

func TestResourceSummaryIsBoundedByTheScrape(t *testing.T) {
	p := &ctxStats{got: make(chan context.Context, 1)}
	hs := resourceServer(t, p)
	if code, _, _ := fetch(t, hs.URL+"/metrics/resource", ""); code != http.StatusOK {
		t.Fatalf("code %d", code)
	}
	ctx := <-p.got
	if _, ok := ctx.Deadline(); !ok {
		t.Fatal("the summary of a scrape has no deadline")
	}
	if ctx.Err() == nil {
		t.Fatal("the summary's context outlived its scrape")
	}
}
