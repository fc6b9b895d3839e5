//go:build linux

package kubeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/sources"
)

// BenchmarkApplyLinear: 1,000 distinct ConfigMaps applied one by one
// through the API's HTTP handlers, the push source, the source informer and
// the store, as a client-side `kubectl apply` of a new object makes it: a
// GET (404), then a POST of the object carrying its last-applied
// annotation, answered once the store shows it. The measure is this
// process's CPU (getrusage: the server, its one client and the push source's
// fsyncs) per apply over the first and the last window of 100; the goal is
// a ratio of at most 1.2 (the cost of one apply must not grow with the
// ConfigMaps already there). BERTH_APPLY_N and BERTH_APPLY_WINDOW resize it.
func BenchmarkApplyLinear(b *testing.B) { benchApplyLinear(b, sources.Options{}) }

// BenchmarkApplyLinearQuota is BenchmarkApplyLinear with a quota on the
// push source that every apply fits.
func BenchmarkApplyLinearQuota(b *testing.B) {
	benchApplyLinear(b, sources.Options{Quota: sources.Quota{Pods: 100, Objects: 100_000, Bytes: 1 << 30}})
}

func benchApplyLinear(b *testing.B, opts sources.Options) {
	n, window := envIntOr("BERTH_APPLY_N", 1000), envIntOr("BERTH_APPLY_WINDOW", 100)
	if window > n/2 {
		b.Fatalf("window %d must be at most half of %d applies", window, n)
	}
	for range b.N {
		b.StopTimer()
		f := newWriteFixtureSource(b, opts)
		b.StartTimer()
		windows := make([]time.Duration, 0, n/window)
		var cpu0 time.Duration
		for i := range n {
			if i%window == 0 {
				goruntime.GC() // the garbage of the window before is not this one's
				cpu0 = processCPU(b)
			}
			apply(b, f, fmt.Sprintf("cm-%04d", i))
			if (i+1)%window == 0 {
				windows = append(windows, (processCPU(b)-cpu0)/time.Duration(window))
			}
		}
		first, last := windows[0], windows[len(windows)-1]
		b.ReportMetric(float64(first.Microseconds())/1000, "cpu-ms/apply-first")
		b.ReportMetric(float64(last.Microseconds())/1000, "cpu-ms/apply-last")
		b.ReportMetric(float64(last)/float64(first), "last/first")
		var ws []string
		for _, w := range windows {
			ws = append(ws, fmt.Sprintf("%.2f", float64(w.Microseconds())/1000))
		}
		fmt.Printf("%s: %d ConfigMaps applied one by one; CPU ms per apply in each window of %d: %s\n", b.Name(), n, window, strings.Join(ws, " "))
	}
}

// apply creates ConfigMap name as kubectl apply does a new object.
func apply(tb testing.TB, f *writeFixture, name string) {
	tb.Helper()
	path := "/api/v1/namespaces/default/configmaps"
	if code, _, body := f.do(tb, http.MethodGet, path+"/"+name, "", ""); code != http.StatusNotFound {
		tb.Fatalf("GET %s: %d %s", name, code, body)
	}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"data":     map[string]string{"app.properties": "name=" + name + "\nreplicas=3\nlevel=info\n", "mode": "bench"}}
	last, _ := json.Marshal(cm)
	cm["metadata"].(map[string]any)["annotations"] = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(last) + "\n"}
	body, _ := json.Marshal(cm)
	if code, _, out := f.do(tb, http.MethodPost, path+"?fieldManager=kubectl-client-side-apply&fieldValidation=Strict", "application/json", string(body)); code != http.StatusCreated {
		tb.Fatalf("POST %s: %d %s", name, code, out)
	}
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func envIntOr(key string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(key)); err == nil && v > 0 {
		return v
	}
	return def
}
